// Online training's incremental dumps (dynamicemb's incremental_dump, solver.incremental_dump):
// after every `interval` timed iterations, each rank writes, for each dynamic layer, the entries
// of its table whose score is at or above the threshold its last dump returned (the first dump:
// every entry), as a serving system that follows a training job takes its fresh rows.
//
// Layout: <directory>/iteration-<N, 8 digits>/<layer>.rank-<r>-of-<R>.kv, each file in the KV
// table's dump format (kv/table_file.hpp: atomic, checksummed; it loads into a table of any
// capacity), then manifest.json, written by rank 0 once every rank's files are in place: a dump
// directory is complete when its manifest exists. The manifest lists each layer's files with their
// entry counts and thresholds.
//
// Timing, outside the step's clock, per rank and dump:
//   copy_s   the snapshot of the entries into memory (one read call of each table): training
//            waits for it in both modes;
//   write_s  the files written (and fsynced); "blocking": training waits for it too;
//            "background": a thread of the rank writes them while the next steps run;
//   wait_s   "background": how long the next dump (or the run's end) waited for the previous
//            dump's writer.
// The stall of a dump is what training waited on the slowest rank: copy + write (blocking) or
// copy + wait (background). A background dump's cost to the steps it overlaps is measured too:
// each timed iteration is marked when a writer ran on some rank while it started.
//
// A background dump holds its image (the files' bytes) in memory until written; its manifest is
// written when the next dump starts or the run ends, after every rank's writer has finished.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "embedding/engine.hpp"
#include "kv/kv_table.hpp"

namespace embscale::run {

// InputError naming solver.incremental_dump when the config asks for dumps it cannot take: no
// layer with a single dynamic table, a two-tier layer, a parameter-server run, an interval longer
// than the run.
void check_incremental_dumps(const config::Config& config);

// One dump, every rank's figures combined (all ranks agree).
struct DumpRecord {
  std::int64_t iteration = 0;  // timed iterations before it
  std::int64_t entries = 0;    // over ranks and layers
  std::int64_t bytes = 0;      // the files' bytes over ranks and layers
  double copy_s = 0;           // max over ranks
  double write_s = 0;          // max over ranks
  double wait_s = 0;           // max over ranks (background)
  double stall_s = 0;          // max over ranks of what training waited for
};

struct OnlineDumpResults {
  bool background = false;
  std::vector<DumpRecord> dumps;
  // Per timed iteration (all ranks agree): 1 when a background writer ran on some rank as it
  // started; empty for blocking dumps.
  std::vector<double> overlapped;
};

// The directory of the dump (or checkpoint, lib/run/checkpoint.hpp) after `iteration` timed
// iterations: <root>/iteration-<8 digits>.
std::filesystem::path iteration_directory(const std::filesystem::path& root, std::int64_t iteration);

class IncrementalDumps {
 public:
  // Collective: creates the dumps' directory (an agreed InputError naming the field when it cannot).
  IncrementalDumps(comm::Communicator& comm, const config::Config& config, embedding::EmbeddingEngine& engine);
  // Waits for a writer still running (its failure is dropped: the run is already failing).
  ~IncrementalDumps();
  IncrementalDumps(const IncrementalDumps&) = delete;
  IncrementalDumps& operator=(const IncrementalDumps&) = delete;

  // Whether a dump follows the timed iteration `iteration` (0-based).
  bool due(std::int64_t iteration) const noexcept { return (iteration + 1) % interval_ == 0; }
  // Collective: the dump after `iterations` timed iterations. An agreed Error when a rank fails.
  void dump(std::int64_t iterations);
  // Call before each timed step: whether this rank's writer is running.
  bool writing() const noexcept;
  // Records whether the step about to run is overlapped (writing() on this rank).
  void mark_step(bool overlapped) { overlapped_.push_back(overlapped ? 1.0 : 0.0); }
  // Collective, after the last step: waits for the last writer, writes its manifest, and returns
  // the figures (every rank the same).
  OnlineDumpResults finish(std::size_t iterations_run);

 private:
  struct LayerDump {
    std::size_t layer;            // the engine's index
    std::string name;             // the config's
    std::uint64_t threshold = 0;  // of the next dump
  };
  // One rank's part of one dump, until its manifest is written.
  struct Pending {
    std::int64_t iteration = -1;
    std::vector<std::int64_t> entries, thresholds, next_thresholds;  // per layer
    std::int64_t bytes = 0;
    double copy_s = 0, write_s = 0, wait_s = 0;
  };

  // Joins the writer (agreed: a failed write on any rank fails all) and, if a dump is pending,
  // combines the ranks' figures and writes its manifest.
  void complete_pending();
  void write_manifest(const Pending& pending, const std::vector<std::int64_t>& all_entries,
                      const std::vector<std::int64_t>& all_thresholds, const std::vector<std::int64_t>& all_next);

  comm::Communicator& comm_;
  embedding::EmbeddingEngine& engine_;
  std::filesystem::path root_;
  std::int64_t interval_;
  bool background_;
  std::vector<LayerDump> layers_;
  Pending pending_;
  std::thread writer_;
  std::exception_ptr writer_error_;
  std::shared_ptr<std::atomic<bool>> writer_busy_;
  std::vector<DumpRecord> records_;
  std::vector<double> overlapped_;  // this rank's marks (1: overlapped)
};

}  // namespace embscale::run
