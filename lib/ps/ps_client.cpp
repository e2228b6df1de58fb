#include "ps/ps_client.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "ps/ps_messages.hpp"

namespace embscale::ps {

PsClient::PsClient(comm::MessageChannel& channel, std::vector<int> servers, std::int32_t dim,
                   std::size_t dense_parameters, Placement placement)
    : channel_(channel), servers_(std::move(servers)), dim_(static_cast<std::size_t>(dim)),
      dense_parameters_(dense_parameters), placement_(placement) {
  EMBSCALE_EXPECTS(!servers_.empty(), "a trainer needs at least one server");
  EMBSCALE_EXPECTS(dim >= 1, "rows need dim >= 1");
}

void PsClient::read_one_sided(OneSidedReader& reader) {
  EMBSCALE_EXPECTS(placement_ == Placement::kStrided, "one-sided reads address strided rows");
  reader_ = &reader;
}

void PsClient::group(std::span<const Key> keys) {
  counts_.assign(servers_.size(), 0);
  server_.resize(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    server_[i] = static_cast<std::uint32_t>(server_of(keys[i]));
    ++counts_[server_[i]];
  }
  std::vector<std::size_t> next(servers_.size(), 0);
  for (std::size_t s = 1; s < servers_.size(); ++s) next[s] = next[s - 1] + counts_[s - 1];
  grouped_.resize(keys.size());
  order_.resize(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::size_t at = next[server_[i]]++;
    grouped_[at] = keys[i];
    order_[at] = i;
  }
}

void PsClient::pull(std::int64_t step, std::span<const Key> keys, std::span<float> rows) {
  EMBSCALE_EXPECTS(rows.size() == keys.size() * dim_, "rows must hold keys.size() x dim values");
  group(keys);
  values_.resize(rows.size());
  pull_grouped(step, grouped_, counts_, values_);
  for (std::size_t j = 0; j < order_.size(); ++j)
    std::copy_n(values_.data() + j * dim_, dim_, rows.data() + order_[j] * dim_);
}

void PsClient::push(std::int64_t step, std::span<const Key> keys, std::span<const float> grads) {
  EMBSCALE_EXPECTS(grads.size() == keys.size() * dim_, "grads must hold keys.size() x dim values");
  group(keys);
  values_.resize(grads.size());
  for (std::size_t j = 0; j < order_.size(); ++j)
    std::copy_n(grads.data() + order_[j] * dim_, dim_, values_.data() + j * dim_);
  push_grouped(step, grouped_, counts_, values_);
}

void PsClient::pull_grouped(std::int64_t step, std::span<const Key> keys, std::span<const std::size_t> counts,
                            std::span<float> rows, std::span<float> dense) {
  EMBSCALE_EXPECTS(dense.size() == dense_parameters_, "every dense parameter the servers hold, or none");
  request_rows(RequestKind::kPull, step, keys, counts, rows, dense);
}

void PsClient::read_grouped(std::int64_t step, std::span<const Key> keys, std::span<const std::size_t> counts,
                            std::span<float> rows, std::span<float> dense) {
  EMBSCALE_EXPECTS(dense.size() == dense_parameters_, "every dense parameter the servers hold, or none");
  request_rows(RequestKind::kRead, step, keys, counts, rows, dense);
}

void PsClient::request_rows(RequestKind kind, std::int64_t step, std::span<const Key> keys,
                            std::span<const std::size_t> counts, std::span<float> rows, std::span<float> dense) {
  EMBSCALE_EXPECTS(counts.size() == servers_.size() && rows.size() == keys.size() * dim_,
                   "a count per server and keys.size() x dim rows");
  if (reader_) {  // one-sided: nothing to ask, only the servers' clocks to wait for
    reader_->read(step, keys, counts, rows, dense);
    return;
  }
  // Every answer's receive is posted before any request goes out: a server answering this trainer
  // never waits on it, whatever else the trainer is sending (no cycle of blocking sends).
  std::vector<comm::Request> answers;
  std::size_t first = 0;
  for (std::size_t s = 0; s < servers_.size(); ++s) {
    answers.push_back(channel_.irecv(rows.subspan(first * dim_, counts[s] * dim_), servers_[s], kRowsTag));
    first += counts[s];
    if (const DenseSlice slice = dense_slice(dense.size(), servers(), static_cast<int>(s)); slice.count > 0)
      answers.push_back(channel_.irecv(dense.subspan(slice.first, slice.count), servers_[s], kDenseValuesTag));
  }
  EMBSCALE_EXPECTS(first == keys.size(), "the counts add up to the keys");
  first = 0;
  for (std::size_t s = 0; s < servers_.size(); ++s) {
    const Header header{kind, step, static_cast<std::int64_t>(counts[s])};
    channel_.send(std::span<const Header>(&header, 1), servers_[s], kHeaderTag);
    if (counts[s] > 0) channel_.send(keys.subspan(first, counts[s]), servers_[s], kKeysTag);
    first += counts[s];
  }
  comm::wait_all(answers);
}

void PsClient::push_grouped(std::int64_t step, std::span<const Key> keys, std::span<const std::size_t> counts,
                            std::span<const float> grads, std::span<const float> dense_grads) {
  EMBSCALE_EXPECTS(counts.size() == servers_.size() && grads.size() == keys.size() * dim_,
                   "a count per server and keys.size() x dim gradients");
  EMBSCALE_EXPECTS(dense_grads.size() == dense_parameters_, "every dense parameter's gradient, or none");
  std::size_t first = 0;
  for (std::size_t s = 0; s < servers_.size(); ++s) {
    const Header header{RequestKind::kPush, step, static_cast<std::int64_t>(counts[s])};
    channel_.send(std::span<const Header>(&header, 1), servers_[s], kHeaderTag);
    if (counts[s] > 0) {
      channel_.send(keys.subspan(first, counts[s]), servers_[s], kKeysTag);
      channel_.send(grads.subspan(first * dim_, counts[s] * dim_), servers_[s], kGradsTag);
    }
    if (const DenseSlice slice = dense_slice(dense_grads.size(), servers(), static_cast<int>(s)); slice.count > 0)
      channel_.send(dense_grads.subspan(slice.first, slice.count), servers_[s], kDenseGradsTag);
    first += counts[s];
  }
}

void PsClient::tell_every_server(RequestKind kind, std::int64_t step) {
  const Header header{kind, step, 0};
  for (const int server : servers_) channel_.send(std::span<const Header>(&header, 1), server, kHeaderTag);
}

void PsClient::end_reads(std::int64_t step) { tell_every_server(RequestKind::kReadsDone, step); }

void PsClient::finish(std::int64_t last_step) { tell_every_server(RequestKind::kDone, last_step); }

}  // namespace embscale::ps
