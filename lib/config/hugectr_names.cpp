#include "config/hugectr_names.hpp"

#include <algorithm>
#include <cstdlib>

namespace embscale::config::hugectr {
namespace {

// An accepted-but-unused key and the check of its value. `not_run` says what HugeCTR would do with
// it that embscale does not (evaluation, checkpoints, ...): such keys go into Config::not_run.
// The others change nothing a run of the embedding part measures; `not_used` says why, and they go
// into Config::not_used, which run and validate print, so that no key is dropped without a word.
// Neither: the key asks for what embscale does anyway (lr_policy "fixed").
struct UnusedKey {
  std::string key;
  void (*check)(const ValueReader&);
  const char* not_run = nullptr;
  const char* not_used = nullptr;
};

constexpr const char* kEvaluation = "evaluation";
// HugeCTR writes the model every `snapshot` iterations in its own files; embscale's checkpoints
// are solver.checkpoint's (lib/run/checkpoint.hpp), which a HugeCTR file does not ask for.
constexpr const char* kSnapshots =
    "HugeCTR's model snapshots; a run here writes none: its checkpoints are solver.checkpoint";
constexpr const char* kModelFile = "initial weights from a model file";
constexpr const char* kDenseCompute = "dense-layer arithmetic";

void a_string(const ValueReader& v) { v.string(); }
void a_boolean(const ValueReader& v) { v.boolean(); }
void a_count(const ValueReader& v) { v.integer(IntRange::at_least(0)); }
void a_positive_count(const ValueReader& v) { v.integer(IntRange::at_least(1)); }
// HugeCTR 2.2 took true or false, later versions the number of evaluation batches to cache.
void cached_eval_batches(const ValueReader& v) {
  if (!v.json().is_boolean()) v.integer(IntRange::at_least(0));
}
void a_sparse_input_type(const ValueReader& v) { v.one_of({"DistributedSlot", "LocalizedSlot"}); }

// HugeCTR supports only these loss scalers.
void loss_scaler(const ValueReader& v) {
  const auto& j = v.json();
  const bool ok = j.is_number_integer() && (j == 128 || j == 256 || j == 512 || j == 1024);
  if (!ok) v.fail("a loss scaler: 128, 256, 512 or 1024");
}

// "AUC", "AUC:<threshold>" or "AverageLoss".
void metric_list(const ValueReader& v) {
  constexpr auto expected = "\"AUC\", \"AUC:<threshold in (0, 1]>\" or \"AverageLoss\"";
  for (const auto& metric : v.array(0, "a list of metrics")) {
    const std::string text = metric.json().is_string() ? metric.string() : "";
    bool ok = text == "AUC" || text == "AverageLoss";
    if (text.starts_with("AUC:")) {
      const char* begin = text.c_str() + 4;
      char* end = nullptr;
      const double threshold = std::strtod(begin, &end);
      ok = end != begin && *end == '\0' && threshold > 0.0 && threshold <= 1.0;
    }
    if (!ok) metric.fail(expected);
  }
}

void fixed_policy(const ValueReader& v) { v.one_of({"fixed"}); }

void model_files(const ValueReader& v) {
  if (v.json().is_array()) {
    for (const auto& file : v.array(0, "a file name or a list of them")) file.string();
  } else if (!v.json().is_string()) {
    v.fail("a file name or a list of them");
  }
}

// HugeCTR's documented optimizer example carries "learning_rate": true beside the hparam block;
// a number there, though, is a learning rate put in the wrong place, not to be dropped silently.
void optimizer_learning_rate_flag(const ValueReader& v) {
  if (!v.json().is_boolean())
    v.fail(
        "true or false (HugeCTR's flag; the learning rate goes in the type's hparam block, e.g. "
        "sgd_hparam.learning_rate)");
}

const std::vector<UnusedKey>& solver_table() {
  static const std::vector<UnusedKey> table = {{"lr_policy", fixed_policy},
                                               {"batchsize_eval", a_positive_count, kEvaluation},
                                               {"snapshot", a_count, nullptr, kSnapshots},
                                               {"snapshot_prefix", a_string, nullptr, kSnapshots},
                                               {"eval_interval", a_positive_count, kEvaluation},
                                               {"eval_batches", a_positive_count, kEvaluation},
                                               {"max_eval_batches", a_positive_count, kEvaluation},
                                               {"mixed_precision", loss_scaler, "fp16 mixed precision"},
                                               {"eval_metrics", metric_list, kEvaluation},
                                               {"enable_tf32_compute", a_boolean, kDenseCompute},
                                               {"dense model_file", a_string, kModelFile},
                                               {"sparse_model_file", model_files, kModelFile}};
  return table;
}

// source, check, num_samples and float_label_dense are read by data_layer.cpp (the trace formats).
const std::vector<UnusedKey>& data_table() {
  static const std::vector<UnusedKey> table = {{"eval_source", a_string, kEvaluation},
                                               {"eval_num_samples", a_count, kEvaluation},
                                               {"cache_eval_data", cached_eval_batches, kEvaluation}};
  return table;
}

const std::vector<UnusedKey>& optimizer_table() {
  static const std::vector<UnusedKey> table = {
      {"learning_rate", optimizer_learning_rate_flag, nullptr, "HugeCTR's flag; the rate is the hparam block's"}};
  return table;
}

const std::vector<UnusedKey>& embedding_table() {
  static const std::vector<UnusedKey> table = {
      {"plan_file", model_files, nullptr, "HugeCTR's all2all plan for NVLink; the exchanges here are MPI's"}};
  return table;
}

// A Data layer's sparse inputs (read by data_layer.cpp but for these).
const std::vector<UnusedKey>& sparse_input_table() {
  static const std::vector<UnusedKey> table = {
      {"type", a_sparse_input_type, nullptr, "the embedding layer's type places the slots"},
      {"is_required", a_boolean, nullptr, "HugeCTR's flag for a slot a sample must hold; every slot is read"}};
  return table;
}

void check_present(const ObjectReader& object, const std::vector<UnusedKey>& table) {
  for (const auto& entry : table)
    if (const auto value = object.optional(entry.key)) entry.check(*value);
}

void append_not_run(const ObjectReader& object, const std::vector<UnusedKey>& table, std::vector<std::string>& out,
                    bool evaluates) {
  for (const auto& entry : table)
    if (entry.not_run && object.has(entry.key) && !(evaluates && entry.not_run == kEvaluation))
      out.push_back(object.path_of(entry.key) + " (" + entry.not_run + ")");
}

void append_not_used(const ObjectReader& object, const std::vector<UnusedKey>& table, std::vector<std::string>& out) {
  for (const auto& entry : table)
    if (entry.not_used && object.has(entry.key)) out.push_back(object.path_of(entry.key) + " (" + entry.not_used + ")");
}

// An optimizer object's keys not used: its flag.
void append_optimizer_not_used(const ObjectReader& optimizer, std::vector<std::string>& out) {
  append_not_used(optimizer, optimizer_table(), out);
}

}  // namespace

const std::vector<std::string>& runnable_embedding_types() {
  static const std::vector<std::string> types = {"All2AllDenseEmbedding",
                                                 "DistributedSlotSparseEmbeddingHash",
                                                 "DistributedSparseEmbedding",
                                                 "LocalizedSlotSparseEmbeddingHash",
                                                 "LocalizedSlotSparseEmbeddingOneHot",
                                                 kShardedEmbedding};
  return types;
}

const std::vector<std::string>& known_embedding_types() {
  static const std::vector<std::string> types = {"HybridSparseEmbedding"};
  return types;
}

const std::vector<std::string>& built_dense_layer_types() {
  static const std::vector<std::string> types = {"InnerProduct",
                                                 "FusedInnerProduct",
                                                 "ReLU",
                                                 "ELU",
                                                 "Sigmoid",
                                                 "Dropout",
                                                 "Reshape",
                                                 "Concat",
                                                 "Slice",
                                                 "Add",
                                                 "ElementwiseMultiply",
                                                 "ReduceSum",
                                                 "FmOrder2",
                                                 "WeightMultiply",
                                                 "Multiply",
                                                 "Interaction",
                                                 "MultiCross",
                                                 "BinaryCrossEntropyLoss"};
  return types;
}

const std::vector<std::string>& known_dense_layer_types() {
  static const std::vector<std::string> types = {"Reshape",
                                                 "Concat",
                                                 "Slice",
                                                 "ELU",
                                                 "ReLU",
                                                 "Sigmoid",
                                                 "Dropout",
                                                 "BatchNorm",
                                                 "LayerNorm",
                                                 "InnerProduct",
                                                 "FusedInnerProduct",
                                                 "MLP",
                                                 "Interaction",
                                                 "FmOrder2",
                                                 "MultiCross",
                                                 "Add",
                                                 "Sub",
                                                 "ElementwiseMultiply",
                                                 "ReduceSum",
                                                 "ReduceMean",
                                                 "DotProduct",
                                                 "WeightMultiply",
                                                 "Multiply",
                                                 "Cast",
                                                 "Gather",
                                                 "Scale",
                                                 "Softmax",
                                                 "MatrixMultiply",
                                                 "FusedReshapeConcat",
                                                 "FusedReshapeConcatGeneral",
                                                 "GRU",
                                                 "PReLU_Dice",
                                                 "MultiHeadAttention",
                                                 "BinaryCrossEntropyLoss",
                                                 "CrossEntropyLoss",
                                                 "MultiCrossEntropyLoss"};
  return types;
}

std::vector<std::string> runnable_layer_types() {
  std::vector<std::string> types = {kDataLayer};
  types.insert(types.end(), runnable_embedding_types().begin(), runnable_embedding_types().end());
  types.insert(types.end(), built_dense_layer_types().begin(), built_dense_layer_types().end());
  return types;
}

std::vector<std::string> not_runnable_layer_types() {
  std::vector<std::string> types = known_embedding_types();
  for (const auto& type : known_dense_layer_types())
    if (std::find(built_dense_layer_types().begin(), built_dense_layer_types().end(), type) ==
        built_dense_layer_types().end())
      types.push_back(type);
  return types;
}

std::vector<std::string> all_layer_types() {
  std::vector<std::string> types = runnable_layer_types();
  const auto rest = not_runnable_layer_types();
  types.insert(types.end(), rest.begin(), rest.end());
  return types;
}

const std::vector<std::string>& runnable_data_formats() {
  static const std::vector<std::string> formats = {kSyntheticFormat, "Norm", "Raw", "Embscale"};
  return formats;
}

const std::vector<std::string>& known_optimizer_types() {
  static const std::vector<std::string> types = {"Ftrl", "RMSProp"};
  return types;
}

const std::vector<std::string>& known_update_types() {
  static const std::vector<std::string> types = {"Local", "Global", "LazyGlobal"};
  return types;
}

namespace {

const std::vector<UnusedKey>& table_of(UnusedIn object) {
  switch (object) {
    case UnusedIn::kSolver: return solver_table();
    case UnusedIn::kData: return data_table();
    case UnusedIn::kSparseInput: return sparse_input_table();
    case UnusedIn::kOptimizer: return optimizer_table();
    case UnusedIn::kEmbedding: break;
  }
  return embedding_table();
}

}  // namespace

std::vector<std::string> with_unused_keys(std::vector<std::string> keys, UnusedIn object) {
  for (const auto& entry : table_of(object)) keys.push_back(entry.key);
  return keys;
}

void check_unused_keys(const ObjectReader& reader, UnusedIn object) { check_present(reader, table_of(object)); }

void append_solver_keys_not_run(const ObjectReader& solver, std::vector<std::string>& not_run, bool evaluates) {
  append_not_run(solver, solver_table(), not_run, evaluates);
}

void append_data_keys_not_run(const ObjectReader& data, std::vector<std::string>& not_run, bool evaluates) {
  append_not_run(data, data_table(), not_run, evaluates);
}

void append_keys_not_used(const ObjectReader& top, std::vector<std::string>& not_used) {
  append_not_used(top.object("solver"), solver_table(), not_used);
  if (top.has("optimizer")) append_optimizer_not_used(top.object("optimizer"), not_used);
  const auto layers = top.required("layers", "");
  const auto& embeddings = runnable_embedding_types();
  for (std::size_t i = 0; i < layers.json().size(); ++i) {
    // Named as every message names a layer ("layers[data]").
    const ObjectReader layer(ValueReader(layers.json()[i], layer_path(layers.json(), i), top.origin()));
    const std::string type = layer.string("type");
    if (type == kDataLayer && layer.has("sparse")) {
      for (const auto& input : layer.required("sparse", "").array(1, ""))
        append_not_used(ObjectReader(input), sparse_input_table(), not_used);
    } else if (std::find(embeddings.begin(), embeddings.end(), type) != embeddings.end()) {
      append_not_used(layer, embedding_table(), not_used);
      if (layer.has("optimizer")) append_optimizer_not_used(layer.object("optimizer"), not_used);
    }
  }
}

}  // namespace embscale::config::hugectr
