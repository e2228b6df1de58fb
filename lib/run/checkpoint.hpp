// Checkpoint and restore of an engine run (solver.checkpoint, `embscale run --resume-from`).
//
// A checkpoint after N timed iterations is everything the steps after it depend on:
//   <directory>/iteration-<N, 8 digits>/
//     <layer>.rank-<r>-of-<R>.kv    each rank's rows of each layer with their optimizer state and
//                                   scores (RowStore::save_checkpoint; the KV table's dump format;
//                                   hot_replicated: .hot.kv and .cold.kv)
//     dense.rank-<r>-of-<R>.bin     the dense model's parameters, optimizer state and step count
//                                   (with dense layers)
//     rank-<r>-of-<R>.json          the engine's step count and each dynamic table's capacity and
//                                   clock (TableClock)
//     manifest.json                 written last, by rank 0, once every rank's files are in
//                                   place: the iteration, the ranks, the config that saved it
// A directory without its manifest is a save that did not finish, and is never resumed from.
// The data needs nothing saved: a batch is a function of its iteration (the synthetic generator)
// or of its place in the trace.
//
// Saved every `interval` timed iterations, and when a stop signal ends the run (on_stop): the
// ranks agree on the signal at an iteration boundary (core/stop_request.hpp), save, and exit 3.
// `keep` bounds how many are kept. Each save's seconds and bytes go into the report
// (online/checkpoints), outside the steps' timings.
//
// A run resumed from a checkpoint (solver.checkpoint.resume_from) skips the warm-up, restores
// every rank's part, and runs timed iterations N .. max_iter - 1; on the same number of ranks its
// losses are bit for bit the ones the uninterrupted run had at those iterations
// (tests/run/checkpoint_mpi_test.cpp). The config must be the one that saved it, but for the
// fields a resumed run may change (kResumableFields: max_iter, display, checkpoint,
// incremental_dump, non_finite_loss); the first other difference is named.
//
// On another number of ranks, where the layers allow it: static rows whole (every scheme but
// column_wise, whose slices' width depends on the rank count), and a dense model without
// feature-parallel parameters. Every rank reads every saved rank's file of a layer and keeps the
// rows it owns; the rows, optimizer state and step counts are then exactly the saved ones, and the
// losses after it those of the saved model on the new ranks (the sums over ranks round in another
// order than the saving run's would have). A dynamic table resumes only on its rank count.
//
// Not covered (refused, naming the field): a parameter server's run (its servers save their
// shards: parameter_server.save_directory), GPU layers, two-tier storage, an eviction study (its
// oracles would start empty). A dynamic table's admission filter is not saved: a resumed table
// admits as a new one would (the losses of such a table may differ).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "embedding/engine.hpp"

namespace embscale::run {

class DenseModel;

// The config fields a resumed run may set otherwise than the run that saved the checkpoint.
inline constexpr const char* kResumableFields[] = {"/solver/max_iter", "/solver/display", "/solver/checkpoint",
                                                   "/solver/incremental_dump", "/solver/non_finite_loss"};

// InputError naming solver.checkpoint when the config asks for checkpoints or a resume it cannot
// have (see above).
void check_checkpoints(const config::Config& config);

// One save, every rank's figures combined.
struct CheckpointRecord {
  std::int64_t iteration = 0;  // timed iterations before it
  std::int64_t bytes = 0;      // the files' bytes over ranks
  double seconds = 0;          // the slowest rank's
};

class Checkpoints {
 public:
  // `dense`: the run's dense model, or null.
  Checkpoints(comm::Communicator& comm, const config::Config& config, embedding::EmbeddingEngine& engine,
              DenseModel* dense);

  bool saves() const noexcept { return !root_.empty(); }
  // Whether a checkpoint follows timed iteration `iteration` (0-based).
  bool due(std::int64_t iteration) const noexcept {
    return saves() && interval_ > 0 && (iteration + 1) % interval_ == 0;
  }
  bool on_stop() const noexcept { return saves() && on_stop_; }
  // Collective: the checkpoint after `iterations` timed iterations (once per iteration: a second
  // call for the same one returns its directory). An agreed Error when a rank fails.
  std::filesystem::path save(std::int64_t iterations);
  const std::vector<CheckpointRecord>& records() const noexcept { return records_; }

  // Collective: restores the checkpoint the config resumes from. An agreed InputError naming the
  // checkpoint when it is not one this run can continue.
  struct Restored {
    std::filesystem::path directory;
    std::int64_t iteration = 0;  // the timed iterations it follows
  };
  Restored restore();

 private:
  // InputError naming the manifest when a layer or the dense model cannot move from
  // `saved_ranks` ranks to this run's.
  void check_resharding(int saved_ranks, const std::filesystem::path& manifest) const;
  comm::Communicator& comm_;
  const config::Config& config_;
  embedding::EmbeddingEngine& engine_;
  DenseModel* dense_;
  std::filesystem::path root_;  // empty: no saves
  std::int64_t interval_;
  bool on_stop_;
  std::int64_t keep_;
  std::vector<CheckpointRecord> records_;
};

// The checkpoint `path` names: itself when it holds a manifest, else the newest complete
// iteration-* under it. InputError when there is none.
std::filesystem::path find_checkpoint(const std::filesystem::path& path);

}  // namespace embscale::run
