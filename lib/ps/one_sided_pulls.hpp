// One-sided pulls (`parameter_server.pulls: "one_sided"`): the servers keep their static rows and
// their dense slice in memory the trainers read directly (comm::RemoteWindow: MPI's RMA or UCX's
// gets), so a pull sends no request and the server's CPU is not in its path. Pushes stay messages
// the server applies (ParameterServer).
//
// The staleness rule without the server: each server publishes, in its clock window, the step
// through which it has applied every trainer's pushes. A pull of step s reads once every server
// has published s - 1 - staleness or later (the rule of the two-sided protocol, checked by the
// reader), and then reads its rows.
//   synchronous: a server applies step s only when every trainer has pushed it, which each does
//     after its reads of step s: a read never meets a write, and reads the rows the two-sided
//     protocol answers;
//   asynchronous: a push is applied while other trainers may read its rows (as Hogwild: a row read
//     during an update may mix values from before and after it); the bound on steps holds.
// The server writes its rows and dense values, publishes the windows (RemoteWindow::publish),
// then stores the clock and publishes it: a reader that saw the clock reads rows at least that new.
//
// Row r of server s (Placement::kStrided: key % servers, r = key / servers) is at floats
// [r * words_per_row, r * words_per_row + dim) of its rows window; words_per_row (values and the
// optimizer's state) is in its clock window beside the clock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "comm/message_channel.hpp"
#include "core/batch.hpp"

namespace embscale::ps {

// A server's clock window. The server stores applied_through through std::atomic_ref (one
// aligned 8-byte store, which a reader's get copies whole).
struct ServerClock {
  std::int64_t applied_through = 0;  // every trainer's pushes applied through this step
  std::int64_t words_per_row = 0;    // the rows window's row stride, in floats; 0: not published yet
};
static_assert(std::atomic_ref<std::int64_t>::is_always_lock_free, "the clock is stored in one access");

// The three windows of one-sided pulls, opened by every rank of the channel together: a server's
// with its shard's rows and its dense slice, a trainer's empty.
class PullWindows {
 public:
  // Collective over `channel`. `row_words`, `dense_values`: a server's rows array and dense slice,
  // in floats (0 and 0 on a trainer). `map`: MessageChannel::expose's (false: every read through
  // the transport's RMA gets, as across hosts).
  PullWindows(comm::MessageChannel& channel, bool server, std::size_t row_words, std::size_t dense_values,
              bool map = true);

  // A server's side: the memory its static store keeps its rows in (StaticRowStore's RowMemory),
  // its dense slice, and the clock it publishes after every update.
  std::span<float> rows();
  std::span<float> dense();
  // Makes the rows and the dense values written so far visible, then the clock.
  void publish(std::int64_t applied_through, std::int64_t words_per_row);

  comm::RemoteWindow& row_window() { return *rows_; }
  comm::RemoteWindow& dense_window() { return *dense_; }
  comm::RemoteWindow& clock_window() { return *clock_; }

 private:
  std::unique_ptr<comm::RemoteWindow> rows_, dense_, clock_;
  ServerClock* clock_block_ = nullptr;  // in clock_'s memory, on a server
};

// A trainer's reads through the windows.
class OneSidedReader {
 public:
  // `servers`: the servers' ranks in the channel, in server index order. `staleness`: the run's
  // bound (0 synchronous).
  OneSidedReader(PullWindows& windows, std::vector<int> servers, std::int32_t dim, std::int64_t staleness);

  // The rows of the distinct `keys` (grouped by server, counts[s] keys of server s, in server
  // order) into `rows`, and every server's dense slice into `dense` (empty: none), as a pull of
  // `step` reads them: once every server has applied through step - 1 - staleness.
  void read(std::int64_t step, std::span<const Key> keys, std::span<const std::size_t> counts, std::span<float> rows,
            std::span<float> dense);
  // The largest staleness a read saw: (step - 1) minus the least clock of the servers it read.
  std::int64_t max_staleness() const noexcept { return max_staleness_; }
  // Reads that found a server behind (that waited for pushes).
  std::int64_t deferred_reads() const noexcept { return deferred_; }
  // The same since the last call (a run's per-iteration counters).
  struct Counters {
    std::int64_t deferred_reads = 0, max_staleness = 0;
  };
  Counters take_counters() noexcept { return std::exchange(since_taken_, {}); }

 private:
  std::int64_t wait_until_readable(std::int64_t step);  // returns the least clock seen
  // A server's rows where its window is mapped here (RemoteWindow::mapped): plain loads, each
  // row a few ahead prefetched (a pull's rows are scattered over a table far beyond the caches).
  static constexpr std::size_t kRowsAhead = 8;
  void copy_mapped_rows(const std::byte* mapped, std::size_t bytes, std::span<const Key> keys, float* out) const;
  PullWindows& windows_;
  std::vector<int> servers_;
  std::size_t dim_;
  std::int64_t staleness_;
  std::size_t words_per_row_ = 0;    // read from server 0's clock window at the first read
  std::vector<ServerClock> clocks_;  // the last clock blocks read, per server
  std::int64_t max_staleness_ = 0;
  std::int64_t deferred_ = 0;
  Counters since_taken_;
};

}  // namespace embscale::ps
