// The config's dense layers (config.dense_layers; lib/model's DenseGraph over a BLAS) as the
// engine's model objective: every embedding layer's pooled output, the Data layer's dense
// features and labels go in; the loss layer (BinaryCrossEntropyLoss: the CTR model's loss), or
// without one the stand-in regression on the model's output (regression_objective.hpp), scores
// it; its backward hands each embedding layer its gradient; the dense parameters' gradients are
// summed over ranks and the global optimizer updates them. Phases: kDensePhases.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <vector>

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "embedding/engine.hpp"

namespace embscale::run {

inline constexpr embedding::PhaseDefinition kDensePhases[] = {
    {"dense_forward", "the dense layers forward (BLAS products; a feature-parallel layer's exchanges)"},
    {"loss",
     "the loss layer (BinaryCrossEntropyLoss), or the stand-in regression on the model's output, and its "
     "gradient per sample"},
    {"dense_backward", "the dense layers backward, down to each embedding layer's gradient"},
    {"dense_allreduce", "the replicated dense parameters' gradients summed over ranks (one allreduce)", "allreduce"},
    {"dense_update", "the optimizer over every dense parameter"},
};

// The config's dense graph, its optimizer and its step count, over the engine's layers' outputs.
class DenseModel {
 public:
  DenseModel(comm::Communicator& comm, const config::Config& config);
  ~DenseModel();
  // One training step's dense part (the engine's model objective): this rank's share of the loss.
  double step(const Batch& batch, std::span<const std::span<const float>> pooled,
              std::span<const std::span<float>> grad, embedding::StepRecorder& recorder);
  // An evaluation batch forward (Dropout off, nothing trained) of `global_rows` samples over all
  // ranks: this rank's logits (the loss layer's first bottom) and its share of the loss.
  struct Scores {
    std::vector<float> logits;
    double loss = 0.0;
  };
  Scores evaluate(const Batch& batch, std::span<const std::span<const float>> pooled, std::int64_t global_rows);
  bool has_loss_layer() const;

  // A parameter server holds the replicated dense parameters (ps::ParameterServer's dense slice):
  // from now on step() computes this rank's gradients (with 1/trainers of the regularizer's), and
  // neither sums them over ranks nor updates; the caller pushes replicated_gradients() and sets
  // replicated_values() from the servers before each step. Phases: the first three of
  // kDensePhases. Refused (Error) with local (feature-parallel) parameters.
  void hold_parameters_on_servers(int trainers);
  std::span<float> replicated_values();
  std::span<const float> replicated_gradients();
  // The last step's logits on this rank (the loss layer's first bottom, as forward left it; empty
  // without a loss layer): the run scores the batch's AUC after the step's clock stopped.
  std::span<const float> last_logits() const;

  // A checkpoint of the model (lib/run/checkpoint.hpp): its step count, its parameters (the
  // replicated ones and this rank's local ones) and the optimizer's state, in a checksummed file
  // at `path` written atomically; load_state reads one into a model made from the same config on
  // the same rank of as many ranks (InputError naming the file when it is not that).
  void save_state(const std::filesystem::path& path);
  // Whether it has per-rank (feature-parallel) parameters: its state is then its rank's alone.
  bool has_local_parameters() const;
  void load_state(const std::filesystem::path& path);

 private:
  void set_inputs(const Batch& batch, std::span<const std::span<const float>> pooled);
  struct Parts;
  std::unique_ptr<Parts> parts_;
  comm::Communicator& comm_;
  const config::Config& config_;
  std::int64_t steps_ = 0;           // applied so far (warm-up included): the schedule's and Adam's step
  int server_held_by_trainers_ = 0;  // hold_parameters_on_servers' count; 0: this model updates
};

// Sets the engine's model objective to the config's dense layers (nothing without them) and
// returns the model (null without). Its parameters start from the solver's seed. Collective over
// `comm` (the engine's).
std::shared_ptr<DenseModel> attach_dense_model(comm::Communicator& comm, const config::Config& config,
                                               embedding::EmbeddingEngine& engine);

}  // namespace embscale::run
