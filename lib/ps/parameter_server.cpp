#include "ps/parameter_server.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/timer.hpp"

namespace embscale::ps {
namespace {

void add_counters(embedding::StoreCounters& to, const embedding::StoreCounters& from) {
  to.hits += from.hits, to.misses += from.misses, to.inserts += from.inserts, to.evictions += from.evictions;
  to.refused += from.refused, to.not_admitted += from.not_admitted, to.fast_tier_misses += from.fast_tier_misses;
}

}  // namespace

ParameterServer::ParameterServer(comm::MessageChannel& channel, ServerOptions options, embedding::RowStore& shard,
                                 const embedding::SparseOptimizer& optimizer)
    : channel_(channel), options_(std::move(options)), shard_(shard), optimizer_(optimizer),
      dim_(static_cast<std::size_t>(shard.dim())), applied_(options_.trainers.size(), 0),
      received_(options_.trainers.size(), 0), finished_(options_.trainers.size(), false),
      read_through_(options_.trainers.size(), 0) {
  EMBSCALE_EXPECTS(!options_.trainers.empty(), "a parameter server serves at least one trainer");
  EMBSCALE_EXPECTS(std::is_sorted(options_.trainers.begin(), options_.trainers.end()), "trainers in ascending order");
  EMBSCALE_EXPECTS(options_.staleness >= 0, "staleness >= 0");
  EMBSCALE_EXPECTS(options_.dense_values.empty() || options_.dense_update, "a dense slice needs its update");
  if (options_.synchronous) options_.staleness = 0;
  dense_ = options_.dense_values;
}

void ParameterServer::serve_one_sided(PullWindows& windows, std::int64_t words_per_row) {
  EMBSCALE_EXPECTS(windows.dense().size() == dense_.size(), "a dense window of the server's slice");
  std::copy(dense_.begin(), dense_.end(), windows.dense().begin());
  dense_ = windows.dense();
  windows_ = &windows;
  words_per_row_ = words_per_row;
  windows_->publish(applied_through(), words_per_row_);
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
  rows_.resize(pull.keys.size() * dim_);
  if (pull.evaluation) {
    read_for_evaluation(pull.keys);
  } else {
    stats_.max_staleness = std::max(stats_.max_staleness, pull.step - 1 - applied_through());
    Stopwatch table;
    if (!pull.keys.empty()) shard_.read(pull.keys, rows_);  // inserts unseen ids with their initial rows
    stats_.read_seconds += table.seconds();
    ++stats_.pulls;
    stats_.keys_pulled += static_cast<std::int64_t>(pull.keys.size());
  }
  channel_.send(std::span<const float>(rows_), pull.source, kRowsTag);
  if (!dense_.empty()) channel_.send(std::span<const float>(dense_), pull.source, kDenseValuesTag);
}

void ParameterServer::read_for_evaluation(std::span<const Key> keys) {
  if (keys.empty()) return;
  const embedding::StoreCounters before = shard_.take_counters();
  shard_.set_evaluating(true);
  shard_.read(keys, rows_);
  shard_.set_evaluating(false);
  (void)shard_.take_counters();  // the evaluation's own
  add_counters(training_counters_, before);
}

embedding::StoreCounters ParameterServer::take_counters() {
  embedding::StoreCounters c = shard_.take_counters();
  add_counters(c, training_counters_);
  training_counters_ = {};
  return c;
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

void ParameterServer::apply(std::int64_t step, std::span<const Key> keys, std::span<const float> grads,
                            std::span<const float> dense_grads) {
  Stopwatch table;
  if (!keys.empty()) shard_.apply(keys, grads, optimizer_, step);
  if (!dense_.empty()) options_.dense_update(dense_, dense_grads, step);
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
    apply(step, push.keys, push.grads, push.dense_grads);
    applied_[t] = step;
    if (windows_) windows_->publish(applied_through(), words_per_row_);
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
  merged_dense_.assign(dense_.size(), 0.0f);  // the dense gradients, summed in trainer order
  for (const Push& p : held.pushes)
    for (std::size_t k = 0; k < merged_dense_.size(); ++k) merged_dense_[k] += p.dense_grads[k];
  apply(step, keys, grads, merged_dense_);
  held_.erase(step);
  std::fill(applied_.begin(), applied_.end(), step);
  if (windows_) windows_->publish(step, words_per_row_);
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
    case RequestKind::kPull:
    case RequestKind::kRead: {
      Pull pull{source, header.step, std::vector<Key>(n), header.kind == RequestKind::kRead};
      if (n) channel_.recv(std::span<Key>(pull.keys), source, kKeysTag);
      if (may_read(pull.step)) {
        answer(pull);
      } else {
        if (!pull.evaluation) ++stats_.deferred_pulls;
        waiting_.push_back(std::move(pull));
      }
      break;
    }
    case RequestKind::kPush: {
      Push push{std::vector<Key>(n), std::vector<float>(n * dim_), std::vector<float>(dense_.size())};
      if (n) {
        channel_.recv(std::span<Key>(push.keys), source, kKeysTag);
        channel_.recv(std::span<float>(push.grads), source, kGradsTag);
      }
      if (!push.dense_grads.empty()) channel_.recv(std::span<float>(push.dense_grads), source, kDenseGradsTag);
      on_push(source, header.step, std::move(push));
      answer_eligible();
      break;
    }
    case RequestKind::kReadsDone:
      if (header.step <= read_through_[t])
        throw Error("parameter server (rank " + std::to_string(channel_.rank()) + "): trainer rank " +
                    std::to_string(source) + " ended the reads of an evaluation after step " +
                    std::to_string(header.step) + " after one after step " + std::to_string(read_through_[t]));
      read_through_[t] = header.step;
      break;
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

ServeStats ParameterServer::serve_evaluation(std::int64_t step) {
  stats_ = {};
  while (*std::min_element(read_through_.begin(), read_through_.end()) < step) {
    handle_next();
    for (std::size_t t = 0; t < finished_.size(); ++t)
      if (finished_[t] && read_through_[t] < step)
        throw Error("parameter server (rank " + std::to_string(channel_.rank()) + "): trainer rank " +
                    std::to_string(options_.trainers[t]) + " finished without the evaluation after step " +
                    std::to_string(step));
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
