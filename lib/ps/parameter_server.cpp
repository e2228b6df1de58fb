#include "ps/parameter_server.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/timer.hpp"

namespace embscale::ps {

ParameterServer::ParameterServer(comm::MessageChannel& channel, ServerOptions options, embedding::RowStore& shard,
                                 const embedding::SparseOptimizer& optimizer)
    : channel_(channel), options_(std::move(options)), shard_(shard), optimizer_(optimizer),
      dim_(static_cast<std::size_t>(shard.dim())), applied_(options_.trainers.size(), 0),
      received_(options_.trainers.size(), 0), finished_(options_.trainers.size(), false) {
  EMBSCALE_EXPECTS(!options_.trainers.empty(), "a parameter server serves at least one trainer");
  EMBSCALE_EXPECTS(std::is_sorted(options_.trainers.begin(), options_.trainers.end()), "trainers in ascending order");
  EMBSCALE_EXPECTS(options_.staleness >= 0, "staleness >= 0");
  if (options_.synchronous) options_.staleness = 0;
}

std::size_t ParameterServer::trainer_index(int source) const {
  const auto it = std::lower_bound(options_.trainers.begin(), options_.trainers.end(), source);
  if (it == options_.trainers.end() || *it != source)
    throw Error("parameter server (rank " + std::to_string(channel_.rank()) + "): a request from rank " +
                std::to_string(source) + ", which is not a trainer");
  return static_cast<std::size_t>(it - options_.trainers.begin());
}

std::int64_t ParameterServer::applied_through() const { return *std::min_element(applied_.begin(), applied_.end()); }

void ParameterServer::answer(const Pull& pull) {
  stats_.max_staleness = std::max(stats_.max_staleness, pull.step - 1 - applied_through());
  rows_.resize(pull.keys.size() * dim_);
  Stopwatch table;
  if (!pull.keys.empty()) shard_.read(pull.keys, rows_);  // inserts unseen ids with their initial rows
  stats_.read_seconds += table.seconds();
  channel_.send(std::span<const float>(rows_), pull.source, kRowsTag);
  ++stats_.pulls;
  stats_.keys_pulled += static_cast<std::int64_t>(pull.keys.size());
}

void ParameterServer::answer_eligible() {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (!may_read(it->step)) {
      ++it;
      continue;
    }
    answer(*it);
    it = waiting_.erase(it);
  }
}

void ParameterServer::apply(std::int64_t step, std::span<const Key> keys, std::span<const float> grads) {
  Stopwatch table;
  if (!keys.empty()) shard_.apply(keys, grads, optimizer_, step);
  stats_.update_seconds += table.seconds();
}

void ParameterServer::on_push(int source, std::int64_t step, Push push) {
  const std::size_t t = trainer_index(source);
  if (step != applied_[t] + 1)
    throw Error("parameter server (rank " + std::to_string(channel_.rank()) + "): trainer rank " +
                std::to_string(source) + " pushed step " + std::to_string(step) + " after step " +
                std::to_string(applied_[t]));
  received_[t] = step;
  ++stats_.pushes;
  stats_.keys_pushed += static_cast<std::int64_t>(push.keys.size());
  if (!options_.synchronous) {
    apply(step, push.keys, push.grads);
    applied_[t] = step;
    return;
  }
  HeldStep& held = held_[step];
  held.pushes.resize(options_.trainers.size());
  held.pushes[t] = std::move(push);
  if (++held.arrived < options_.trainers.size()) return;
  // Every trainer has pushed `step`: one gradient per key, summed in trainer order, applied once.
  // The pushes' keys in trainer order, each distinct key once in order of first occurrence (the
  // engine's key router, one owner), and per key the sum of its gradients in that order.
  merged_keys_.clear();
  for (const Push& p : held.pushes) merged_keys_.insert(merged_keys_.end(), p.keys.begin(), p.keys.end());
  router_.route(
      merged_keys_, 1, [](Key) { return 0; }, merged_);
  const std::span<const Key> keys = merged_.send_keys;
  std::vector<float>& grads = merged_grads_;
  grads.assign(keys.size() * dim_, 0.0f);
  std::size_t occurrence = 0;
  for (const Push& p : held.pushes)
    for (std::size_t i = 0; i < p.keys.size(); ++i, ++occurrence) {
      float* g = grads.data() + merged_.inverse[occurrence] * dim_;
      const float* from = p.grads.data() + i * dim_;
      for (std::size_t d = 0; d < dim_; ++d) g[d] += from[d];
    }
  apply(step, keys, grads);
  held_.erase(step);
  std::fill(applied_.begin(), applied_.end(), step);
}

void ParameterServer::handle_next() {
  Header header;
  Stopwatch idle;
  const comm::MessageInfo from = channel_.recv_any(std::span<Header>(&header, 1), comm::kAnySource, kHeaderTag);
  stats_.idle_seconds += idle.seconds();
  Stopwatch busy;
  const int source = from.source;
  const std::size_t t = trainer_index(source);  // a request from a rank that is not a trainer is an Error
  if (from.rows != 1 || header.keys < 0)
    throw Error("parameter server (rank " + std::to_string(channel_.rank()) + "): a malformed request from rank " +
                std::to_string(source));
  const auto n = static_cast<std::size_t>(header.keys);
  switch (header.kind) {
    case RequestKind::kPull: {
      Pull pull{source, header.step, std::vector<Key>(n)};
      if (n) channel_.recv(std::span<Key>(pull.keys), source, kKeysTag);
      if (may_read(pull.step)) {
        answer(pull);
      } else {
        ++stats_.deferred_pulls;
        waiting_.push_back(std::move(pull));
      }
      break;
    }
    case RequestKind::kPush: {
      Push push{std::vector<Key>(n), std::vector<float>(n * dim_)};
      if (n) {
        channel_.recv(std::span<Key>(push.keys), source, kKeysTag);
        channel_.recv(std::span<float>(push.grads), source, kGradsTag);
      }
      on_push(source, header.step, std::move(push));
      answer_eligible();
      break;
    }
    case RequestKind::kDone:
      if (finished_[t])
        throw Error("parameter server (rank " + std::to_string(channel_.rank()) + "): trainer rank " +
                    std::to_string(source) + " finished twice");
      finished_[t] = true;
      ++finished_count_;
      break;
    default:
      throw Error("parameter server (rank " + std::to_string(channel_.rank()) + "): unknown request kind " +
                  std::to_string(static_cast<std::int64_t>(header.kind)) + " from rank " + std::to_string(source));
  }
  stats_.busy_seconds += busy.seconds();
}

ServeStats ParameterServer::serve_through(std::int64_t step) {
  stats_ = {};
  while (applied_through() < step) {
    handle_next();
    for (std::size_t t = 0; t < finished_.size(); ++t)
      if (finished_[t] && received_[t] < step)
        throw Error("parameter server (rank " + std::to_string(channel_.rank()) + "): trainer rank " +
                    std::to_string(options_.trainers[t]) + " finished after step " + std::to_string(received_[t]) +
                    ", before step " + std::to_string(step));
  }
  return stats_;
}

ServeStats ParameterServer::serve() {
  stats_ = {};
  while (finished_count_ < options_.trainers.size()) handle_next();
  if (!waiting_.empty())
    throw Error("parameter server (rank " + std::to_string(channel_.rank()) + "): every trainer is done but " +
                std::to_string(waiting_.size()) + " pulls still wait for pushes that will not come");
  return stats_;
}

}  // namespace embscale::ps
