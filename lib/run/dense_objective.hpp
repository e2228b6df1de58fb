// The dense tower of a config (config.dense: InnerProduct + ReLU layers, each data- or
// feature-parallel; lib/model's DenseTower) as the objective of the embedding layer it reads: the
// layer's pooled output goes through the tower, the stand-in regression objective
// (regression_objective.hpp) scores the tower's output per sample, and the gradient comes back
// through the tower to the embedding layer's backward. Phases: dense_forward, loss,
// dense_backward (kDensePhases), named like the layer's others.
#pragma once

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "embedding/engine.hpp"

namespace embscale::run {

inline constexpr embedding::PhaseDefinition kDensePhases[] = {
    {"dense_forward", "dense tower: the connections between partitionings and InnerProduct + ReLU, forward"},
    {"loss", "stand-in objective: a regression loss of the tower's output and its gradient per sample"},
    {"dense_backward",
     "dense tower: backward and SGD of W and b (data-parallel layers allreduce their gradients), "
     "the connections back to the embedding output's gradient"},
};

// Sets the objective of the engine's layer config.dense_input to the tower (no-op without
// config.dense). The tower's weights start from the solver's seed; SGD at the global optimizer's
// learning rate. Collective over `comm` (the engine's).
void attach_dense_tower(comm::Communicator& comm, const config::Config& config, embedding::EmbeddingEngine& engine);

}  // namespace embscale::run
