// What the engine's MPI tests (engine_mpi_test.cpp, engine_eviction_mpi_test.cpp) share: the
// layer and the synthetic data they run, and the measure by which they compare the engine's
// results with a reference.
//
// Tolerance: the relative squared error sum (a - b)^2 / sum b^2 over all compared values must stay
// below 1e-8 (SOK's tests allow 1e-6). The engine stores rows in float and sums in another order
// than a reference (owners' partial sums, reduce-scatters): each value carries a relative
// rounding of a few 2^-24 ~ 6e-8 per operation over a few hundred operations, a relative squared
// error near 1e-12. One dropped or doubled update of a row moves it by lr * |g| ~ 1e-2 of its
// size, a relative squared error near 1e-4 for the row: far above the bound.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/batch_source.hpp"
#include "embedding/scheme_registry.hpp"

namespace embscale::embedding::testing {

inline constexpr double kTolerance = 1e-8;

// Sums of squared differences and squared references.
struct RelativeError {
  double diff = 0, ref = 0;
  void add(double a, double b) {
    diff += (a - b) * (a - b);
    ref += b * b;
  }
  double relative() const { return ref > 0 ? diff / ref : diff; }
};

// Layer "emb1" of `scheme` (a registry name: its config type, and its sharding under
// ShardedEmbedding) over the Data layer's slots 0, 1 and 2, dim 6, static rows for up to 1000
// keys a rank (hot_replicated: the first 4, 2 and 4 keys of its slots replicated). Combiner, optimizer and storage are the caller's.
inline config::EmbeddingLayer scheme_layer(const std::string& scheme) {
  config::EmbeddingLayer e;
  e.name = "emb1";
  for (const auto& entry : schemes())
    if (scheme == entry.name) e.type = entry.config_type;
  if (e.type == "ShardedEmbedding") e.sharding = scheme;
  e.max_vocabulary_size_per_gpu = 1000;
  e.embedding_vec_size = 6;
  e.slots = {0, 1, 2};
  if (scheme == "hot_replicated") e.hot_rows = {4, 2, 4};  // the slots' hottest keys under Zipf
  return e;
}

// Whether the scheme runs on static storage only (refuses dynamic and two-tier tables).
inline bool static_only(const std::string& scheme) {
  const auto* entry = find_scheme(scheme);
  return entry && entry->planner && entry->planner->static_only;
}

// `steps` steps of `batch` samples of a synthetic Data layer: one slot per entry of
// `slot_sizes`, each drawing its keys as `slot` says, one label. No embedding layer yet.
inline config::Config synthetic_config(std::vector<std::int64_t> slot_sizes, const config::SlotWorkload& slot,
                                       std::int64_t batch, std::int64_t steps, std::uint64_t seed) {
  config::Config cfg;
  cfg.solver.batchsize = batch;
  cfg.solver.max_iter = steps;
  cfg.solver.seed = seed;
  cfg.data.format = config::DataFormat::kSynthetic;
  cfg.data.slot_num = static_cast<std::int32_t>(slot_sizes.size());
  cfg.data.slot_size_array = std::move(slot_sizes);
  cfg.data.label_dim = 1;
  cfg.data.synthetic = config::SyntheticSource::same_for_all(slot, cfg.data.slot_num);
  return cfg;
}

// This rank's pooled outputs `got` ([its bags x dim]) against the reference's of the global
// batch (`expected`, [all bags x dim]); `bag_values`: slots x dim per sample.
inline RelativeError pooled_error(std::span<const float> got, const std::vector<float>& expected, SampleShare share,
                                  std::size_t bag_values) {
  RelativeError error;
  for (std::size_t i = 0; i < got.size(); ++i)
    error.add(got[i], expected[static_cast<std::size_t>(share.first) * bag_values + i]);
  return error;
}

}  // namespace embscale::embedding::testing
