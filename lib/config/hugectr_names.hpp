// HugeCTR's vocabulary as embscale knows it (HugeCTR's parser.cpp), kept in one place:
//   * names embscale runs, and names it recognises but does not run yet (these get a
//     "not run in this version" error, or for dense layers an entry of Config::not_run, instead
//     of "unknown"), and
//   * keys accepted for compatibility with HugeCTR files but unused: each is still checked to
//     hold a value HugeCTR would accept, so a file that passes here is not silently broken there.
//
// Internal to lib/config.
#pragma once

#include <string>
#include <vector>

#include "config/json_reader.hpp"

namespace embscale::config::hugectr {

// Layer types.
inline const std::string kDataLayer = "Data";
// embscale's layer for the schemes HugeCTR has no type for (TorchRec's shardings): its
// "sharding" key names the scheme.
inline const std::string kShardedEmbedding = "ShardedEmbedding";
const std::vector<std::string>& runnable_embedding_types();  // "All2AllDenseEmbedding", ...
const std::vector<std::string>& known_embedding_types();     // HugeCTR's and SOK's, not run yet
const std::vector<std::string>& known_dense_layer_types();   // InnerProduct, Reshape, ...
// The dense layer types lib/model builds (its registry, lib/model/layers/layer_registry.cpp,
// holds exactly these: tests/model/layer_registry_test.cpp checks that the two lists agree).
const std::vector<std::string>& built_dense_layer_types();
// "Data", the runnable embeddings and the built dense layers; the known types that are not run;
// both, runnable first
// (the candidates of "did you mean").
std::vector<std::string> runnable_layer_types();
std::vector<std::string> not_runnable_layer_types();
std::vector<std::string> all_layer_types();

// Data formats and optimizer types.
inline const std::string kSyntheticFormat = "Synthetic";
inline const std::string kParquetFormat = "Parquet";      // HugeCTR's, not readable here
const std::vector<std::string>& runnable_data_formats();  // "Synthetic", "Norm", "Raw", "Embscale"
// The optimizers embscale runs are listed with their hparam blocks in optimizer.cpp.
const std::vector<std::string>& known_optimizer_types();  // not run: "Ftrl", "RMSProp"
const std::vector<std::string>& known_update_types();     // "Local", "Global", "LazyGlobal" (all run)

// Keys accepted for compatibility and unused, per object that holds them. with_unused_keys adds
// them to an object's own keys (for only_keys); check_unused_keys validates the present ones (a
// file that passes here is not silently broken in HugeCTR); the append_* functions collect the
// present keys whose effect embscale does not reproduce (evaluation, checkpoints, model files:
// Config::not_run, "<path> (<what HugeCTR would do with it>)") and those that change nothing it
// measures (Config::not_used, "<path> (<why>)").
enum class UnusedIn { kSolver, kData, kSparseInput, kOptimizer, kEmbedding };
std::vector<std::string> with_unused_keys(std::vector<std::string> keys, UnusedIn object);
void check_unused_keys(const ObjectReader& reader, UnusedIn object);
// `evaluates`: the config runs its evaluation (it has dense layers), so its keys are not listed.
void append_solver_keys_not_run(const ObjectReader& solver, std::vector<std::string>& not_run, bool evaluates);
void append_data_keys_not_run(const ObjectReader& data, std::vector<std::string>& not_run, bool evaluates);
// Every present key that is accepted and changes nothing embscale measures (solver.gpu,
// plan_file, sparse[].type, SGD's schedule, ...). `top` is a config that parsed.
void append_keys_not_used(const ObjectReader& top, std::vector<std::string>& not_used);

}  // namespace embscale::config::hugectr
