// Parsers of the config's sections, each validating its own fields (internal to lib/config).
// Cross-section checks (a layer's bottom, unique names and tops) are in layers.cpp.
#pragma once

#include <string>
#include <vector>

#include "config/config.hpp"
#include "config/json_reader.hpp"

namespace embscale::config {

// A tensor name a layer produces (a "top") and the JSON path that declares it.
struct TensorName {
  std::string name;
  std::string path;
};

Solver parse_solver(const ObjectReader& solver);
Optimizer parse_optimizer(const ObjectReader& optimizer);
// `name` is the layer's already-validated name. Appends the tops the layer declares to `tops`.
// The Data layer's optional `synthetic` block, one SlotWorkload per slot of `slot_sizes`.
void parse_synthetic(const ObjectReader& data_layer, const std::vector<std::int64_t>& slot_sizes,
                     SyntheticSource& source);
DataLayer parse_data_layer(const ObjectReader& layer, const std::string& name, std::vector<TensorName>& tops);
EmbeddingStorage parse_embedding_storage(const ObjectReader& storage);
// `global` and `solver_device`: the optimizer and the device of a layer that names none.
EmbeddingLayer parse_embedding_layer(const ObjectReader& layer, const std::string& name, const std::string& type,
                                     const Optimizer& global, Device solver_device);
// The "layers" array: exactly one Data layer, at least one embedding layer, names and tops unique,
// every embedding's bottom the Data layer's sparse top. Fills config.data and config.embeddings.
void parse_layers(const ValueReader& layers, Config& config);
// A HugeCTR dense layer the layers array holds (parse_dense_layers).
struct DenseCandidate {
  ValueReader layer;
  std::string type;
};
// The dense layers (after the embeddings are parsed, in file order): each bottom must name a
// tensor defined before it (the Data layer's, an embedding layer's top, an earlier dense layer's
// top); their tops join `tops`. When every type is built, they become config.dense_layers; else
// each is an entry of config.not_run.
void parse_dense_layers(const std::vector<DenseCandidate>& candidates, Config& config, std::vector<TensorName>& tops);
// The "eviction" section, after the layers (it names them and needs their storage).
EvictionStudy parse_eviction_study(const ObjectReader& eviction, const Config& config);
// The "planner" section.
PlannerSettings parse_planner_settings(const ObjectReader& planner);
// The "parameter_server" section.
ParameterServerSettings parse_parameter_server_settings(const ObjectReader& parameter_server);
// After every section: a layer on parameter servers needs the section, and shares the run only with
// other such layers (the world splits into trainers and servers for all of them).
void check_parameter_server_layers(const Config& config, const std::string& origin);
// After the layers: one device for all of them; solver.communicator only on a GPU run; solver.gpu
// on a host run recorded in Config::not_used.
void check_layer_devices(const ObjectReader& top, Config& config);

}  // namespace embscale::config
