// Where the embedding layers run: one device for the run, and the solver's GPU keys only where
// they act. What runs on a GPU (schemes, storages, sections) is checked by those who run it
// (lib/embedding's check_layers, lib/run's check_device_support); whether the host has a GPU by
// lib/run's check_devices when the run starts.
#include <algorithm>

#include "config/sections.hpp"
#include "core/error.hpp"

namespace embscale::config {

void check_layer_devices(const ObjectReader& top, Config& config) {
  const auto& layers = config.embeddings;
  const auto on_gpu = std::find_if(layers.begin(), layers.end(),
                                   [](const EmbeddingLayer& layer) { return layer.device == Device::kGpu; });
  const auto on_host = std::find_if(layers.begin(), layers.end(),
                                    [](const EmbeddingLayer& layer) { return layer.device == Device::kHost; });
  // One engine, one communicator and one clock per run: a layer on the host beside one on a GPU
  // would need two of each.
  if (on_gpu != layers.end() && on_host != layers.end()) {
    const auto& later = on_gpu < on_host ? *on_host : *on_gpu;
    const auto& earlier = on_gpu < on_host ? *on_gpu : *on_host;
    throw InputError(top.origin() + ": layers[" + later.name + "].device: \"" + to_string(later.device) +
                     "\", but layers[" + earlier.name + "] runs on \"" + to_string(earlier.device) +
                     "\": the embedding layers of one run run on one device (set solver.device for all of them)");
  }
  const auto solver = top.object("solver");
  if (on_gpu != layers.end()) return;
  if (const auto communicator = solver.optional("communicator"))
    communicator->fail_with(
        "chooses how the ranks of a GPU run exchange (NCCL, or MPI staged through host memory); this "
        "config's layers run on the host, over MPI (set solver.device to \"gpu\", or remove the key)");
  if (solver.has("gpu"))
    config.not_used.insert(
        config.not_used.begin(),  // first, as the solver's keys are
        solver.path_of("gpu") +
            " (the GPUs a node uses: this config's layers run on the host, on the launcher's ranks)");
}

}  // namespace embscale::config
