// EmbeddingEngine: one engine for every embedding layer of a config. It builds each layer (its
// slots of the Data layer, its scheme from the registry, its storage and optimizer) and runs the
// SPMD step over all of them:
//   for each layer: forward (the scheme's phases) -> loss (the stand-in dense model,
//   regression_objective.hpp) -> backward (the scheme's phases)
// A layer reads its own slots: when they are a subset, the engine copies them out of the batch
// before the step's clock starts (HugeCTR's data reader hands each embedding its own tensor).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "core/batch.hpp"
#include "embedding/scheme.hpp"
#include "embedding/scheme_registry.hpp"
#include "embedding/sparse_optimizer.hpp"
#include "embedding/step_recorder.hpp"

namespace embscale::embedding {

// The engine's own phase (not a scheme's).
inline constexpr PhaseDefinition kLossPhase{"loss", "stand-in dense model: a regression loss and its gradient per bag"};

// Seed of the rows of the `layer_index`-th embedding layer, derived from the solver's seed (a
// domain apart from the workload's seeds).
std::uint64_t table_seed(std::uint64_t solver_seed, std::size_t layer_index);

// The spec of the config's `layer_index`-th embedding layer (its slots' sizes and offsets in
// `slot_sizes`, the Data layer's key space; the global batch; its table seed) on `comm`; the
// optimizer and threads are the caller's to set. InputError naming .slots beyond the data's.
LayerSpec make_layer_spec(comm::Communicator* comm, const config::Config& config, std::size_t layer_index,
                          std::span<const std::int64_t> slot_sizes);

// Checks what holds on any number of ranks for every layer the engine runs (not a planned "auto"
// layer before its plan, nor a parameter server's): its scheme exists, its fields suit its scheme,
// a dynamic table's options are valid. InputError naming the field.
void check_layers(const config::Config& config, std::span<const std::int64_t> slot_sizes);
// check_layers, then what depends on the number of ranks: its scheme can run on `ranks` (the
// registry's check) and, on static storage, the fullest rank's rows fit max_vocabulary_size_per_gpu
// (SchemeEntry::most_rows, table_owners). InputError naming the field.
void check_layers_for_ranks(const config::Config& config, std::span<const std::int64_t> slot_sizes, int ranks);

// The model's loss over every layer's pooled output at once, in place of each layer's stand-in
// regression (the dense layers: lib/run/dense_objective.hpp): pooled[i] is layer i's output
// (this rank's bags x dim, host memory), grad[i] receives its gradient. It records its own phases
// on `recorder` and returns this rank's share of the loss.
using ModelObjective = std::function<double(const Batch& batch, std::span<const std::span<const float>> pooled,
                                            std::span<const std::span<float>> grad, StepRecorder& recorder)>;

struct EngineOptions {
  // OpenMP threads each rank's owner-side pooling (pool, pool_backward) and static-table update
  // use; the results do not depend on it. 1 by default: an MPI run already puts a rank on every
  // core (bench/peers sets it to compare with single-process libraries at equal threads).
  int threads = 1;
  // The GPU of the layers whose config says "device": "gpu" (config::Device): the library their
  // kernels are called through and the context (device, stream) their step runs on; the layer's
  // communicator (the engine's) must take device memory on that stream (comm::NcclCommunicator,
  // comm::StagedCommunicator). Null: no device layer can be built (an Error naming it).
  const device::DeviceLibrary* device_library = nullptr;
  ExecutionContext device_context = ExecutionContext::host();
};

class EmbeddingEngine {
 public:
  // Collective (schemes may split the communicator). `slot_sizes`: the Data layer's key space
  // (BatchSource::slot_sizes).
  EmbeddingEngine(comm::Communicator& comm, const config::Config& config, std::span<const std::int64_t> slot_sizes,
                  EngineOptions options = {});
  ~EmbeddingEngine();

  // One step over all layers (forward, loss, backward); returns this rank's share of the loss.
  // The recorder gets every phase and counter of the step (begin_step to end_step: its phases are
  // timed when the step returns). Without a model objective each layer runs forward, its stand-in
  // loss and backward in turn; with one, every layer's forward, the objective, every backward.
  double step(const Batch& batch, StepRecorder& recorder);

  // Every layer's forward on an evaluation batch, the tables read without being changed (dynamic
  // stores set_evaluating; no backward, no optimizer; the reads' table counters are dropped).
  // The pooled outputs are then pooled(layer). The recorder times it (begin_step to end_step).
  void evaluate(const Batch& batch, StepRecorder& recorder);

  // From the next step on, the loss is `objective`'s (empty: each layer's stand-in regression).
  // Every layer runs on the host (the objective reads host memory).
  void set_model_objective(ModelObjective objective);

  std::size_t layers() const noexcept { return layers_.size(); }
  const LayerSpec& spec(std::size_t layer) const;
  const SchemeEntry& entry(std::size_t layer) const;
  const EmbeddingScheme& scheme(std::size_t layer) const;
  // The layer's rows on this rank (the eviction study observes a dynamic store's reads).
  RowStore& store(std::size_t layer);
  // Pooled outputs of the last step's forward ([bags x dim] of the layer's slots), in the layer's
  // memory (spec(layer).context: device memory on a device layer).
  std::span<const float> pooled(std::size_t layer) const;
  // The same, copied to the host wherever the layer runs.
  std::vector<float> pooled_on_host(std::size_t layer) const;
  // The phase clock of a step of this engine: CUDA events on the device layers' stream when it
  // has device layers, else the host's clock.
  std::unique_ptr<PhaseClock> make_phase_clock() const;
  // Steps applied so far, warm-up included: the sparse optimizers' step count (Adam's bias
  // correction, the learning-rate schedule). A checkpoint keeps it; set_steps restores it.
  std::int64_t steps() const noexcept { return steps_; }
  void set_steps(std::int64_t steps) noexcept { steps_ = steps; }
  // The qualifier of a layer's phase and counter names: "" for one layer, "<name>." for several.
  const std::string& prefix(std::size_t layer) const;

 private:
  struct Layer;
  static void record_store_counters(Layer& layer, StepRecorder& recorder);
  // Before a step's calls, outside its clock: each dynamic table whose strategy reads the caller's
  // clock gets this step's epoch and score (config::EmbeddingStorage::epoch_steps, custom_score).
  void drive_score_clocks();
  // Each layer's view of `batch` when it reads a subset of its slots (empty for a layer of all).
  std::vector<Batch> slot_subsets(const Batch& batch) const;
  comm::Communicator& comm_;
  std::int64_t global_batch_;
  std::int64_t steps_ = 0;  // applied so far (warm-up included): the optimizer's step count
  EngineOptions options_;
  std::vector<std::unique_ptr<Layer>> layers_;
  ModelObjective model_objective_;  // empty: each layer's stand-in regression
};

// The layer's view of a batch: its slots only (bags re-numbered sample * layer_slots + slot).
Batch select_slots(const Batch& batch, std::span<const std::int32_t> slots);

}  // namespace embscale::embedding
