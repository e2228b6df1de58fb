#include "ps/one_sided_pulls.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include <sched.h>

#include "core/error.hpp"
#include "ps/ps_messages.hpp"

namespace embscale::ps {

PullWindows::PullWindows(comm::MessageChannel& channel, bool server, std::size_t row_words, std::size_t dense_values,
                         bool map)
    : rows_(channel.expose(row_words * sizeof(float), map)), dense_(channel.expose(dense_values * sizeof(float), map)),
      clock_(channel.expose(server ? sizeof(ServerClock) : 0, map)) {
  if (server) clock_block_ = reinterpret_cast<ServerClock*>(clock_->local().data());
}

std::span<float> PullWindows::rows() {
  const std::span<std::byte> bytes = rows_->local();
  return {reinterpret_cast<float*>(bytes.data()), bytes.size() / sizeof(float)};
}

std::span<float> PullWindows::dense() {
  const std::span<std::byte> bytes = dense_->local();
  return {reinterpret_cast<float*>(bytes.data()), bytes.size() / sizeof(float)};
}

void PullWindows::publish(std::int64_t applied_through, std::int64_t words_per_row) {
  EMBSCALE_EXPECTS(clock_block_ != nullptr, "a server publishes its clock");
  rows_->publish();
  dense_->publish();
  clock_block_->words_per_row = words_per_row;
  std::atomic_ref<std::int64_t>(clock_block_->applied_through).store(applied_through, std::memory_order_release);
  clock_->publish();
}

OneSidedReader::OneSidedReader(PullWindows& windows, std::vector<int> servers, std::int32_t dim, std::int64_t staleness)
    : windows_(windows), servers_(std::move(servers)), dim_(static_cast<std::size_t>(dim)), staleness_(staleness),
      clocks_(servers_.size()) {
  EMBSCALE_EXPECTS(!servers_.empty() && dim >= 1 && staleness >= 0, "servers, dim >= 1, staleness >= 0");
}

std::int64_t OneSidedReader::wait_until_readable(std::int64_t step) {
  const std::int64_t needed = step - 1 - staleness_;
  bool waited = false;
  for (;;) {
    for (std::size_t s = 0; s < servers_.size(); ++s)
      windows_.clock_window().get(servers_[s], 0, &clocks_[s], sizeof(ServerClock));
    windows_.clock_window().flush();
    // A server that has not published yet (its window still zeroed) has no rows to read.
    std::int64_t least = std::numeric_limits<std::int64_t>::max();
    bool published = true;
    for (const ServerClock& clock : clocks_) {
      least = std::min(least, clock.applied_through);
      published = published && clock.words_per_row > 0;
    }
    if (published && least >= needed) {
      if (waited) ++deferred_, ++since_taken_.deferred_reads;
      return least;
    }
    waited = true;
    sched_yield();  // the servers may share this core
  }
}

void OneSidedReader::copy_mapped_rows(const std::byte* mapped, std::size_t bytes, std::span<const Key> keys,
                                      float* out) const {
  const int count = static_cast<int>(servers_.size());
  const std::size_t stride = words_per_row_ * sizeof(float), row_bytes = dim_ * sizeof(float);
  const auto address = [&](Key key) {
    const auto offset = static_cast<std::size_t>(strided_row(key, count)) * stride;
    if (offset + row_bytes > bytes)
      throw Error("one-sided pulls: id " + std::to_string(key) + " is beyond the server's " +
                  std::to_string(bytes / stride) + " rows");
    return mapped + offset;
  };
  // Rows of a large table at random: the row kRowsAhead reads ahead is prefetched, so that
  // several misses are in flight (as the server's own static store reads).
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i + kRowsAhead < keys.size()) __builtin_prefetch(address(keys[i + kRowsAhead]));
    std::memcpy(out + i * dim_, address(keys[i]), row_bytes);
  }
}

void OneSidedReader::read(std::int64_t step, std::span<const Key> keys, std::span<const std::size_t> counts,
                          std::span<float> rows, std::span<float> dense) {
  EMBSCALE_EXPECTS(counts.size() == servers_.size() && rows.size() == keys.size() * dim_,
                   "a count per server and keys.size() x dim rows");
  const std::int64_t least = wait_until_readable(step);
  max_staleness_ = std::max(max_staleness_, step - 1 - least);
  since_taken_.max_staleness = std::max(since_taken_.max_staleness, step - 1 - least);
  if (words_per_row_ == 0) {
    words_per_row_ = static_cast<std::size_t>(clocks_.front().words_per_row);
    if (words_per_row_ < dim_)
      throw Error("one-sided pulls: server rank " + std::to_string(servers_.front()) + " stores rows of " +
                  std::to_string(words_per_row_) + " floats, fewer than the dim " + std::to_string(dim_));
  }
  const int count = static_cast<int>(servers_.size());
  const std::size_t row_bytes = dim_ * sizeof(float), stride = words_per_row_ * sizeof(float);
  comm::RemoteWindow& window = windows_.row_window();
  std::size_t first = 0;
  for (std::size_t s = 0; s < servers_.size(); ++s) {
    const std::span<const Key> mine = keys.subspan(first, counts[s]);
    float* const out = rows.data() + first * dim_;
    if (const std::byte* mapped = window.mapped(servers_[s])) {
      copy_mapped_rows(mapped, window.exposed_bytes(servers_[s]), mine, out);
    } else {
      for (std::size_t i = 0; i < mine.size(); ++i) {
        const auto row = static_cast<std::size_t>(strided_row(mine[i], count));
        window.get(servers_[s], row * stride, out + i * dim_, row_bytes);
      }
    }
    first += counts[s];
  }
  EMBSCALE_EXPECTS(first == keys.size(), "the counts add up to the keys");
  for (int s = 0; s < count; ++s)
    if (const DenseSlice slice = dense_slice(dense.size(), count, s); slice.count > 0)
      windows_.dense_window().get(servers_[static_cast<std::size_t>(s)], 0, dense.data() + slice.first,
                                  slice.count * sizeof(float));
  window.flush();
  if (!dense.empty()) windows_.dense_window().flush();
}

}  // namespace embscale::ps
