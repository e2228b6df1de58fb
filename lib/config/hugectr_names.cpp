#include "config/hugectr_names.hpp"

#include <cstdlib>

namespace embscale::config::hugectr {
namespace {

// An accepted-but-unused key and the check of its value. `not_run` says what HugeCTR would do with
// it that embscale does not (evaluation, checkpoints, ...): such keys go into Config::not_run.
// Keys without it change nothing a run of the embedding part measures (lr_policy "fixed" is what
// embscale runs; gpu is the placement the rank count replaces).
struct UnusedKey {
  std::string key;
  void (*check)(const ValueReader&);
  const char* not_run = nullptr;
};

constexpr const char* kEvaluation = "evaluation";
constexpr const char* kCheckpoints = "checkpoints";
constexpr const char* kModelFile = "initial weights from a model file";
constexpr const char* kDenseCompute = "dense-layer arithmetic";

void a_string(const ValueReader& v) { v.string(); }
void a_boolean(const ValueReader& v) { v.boolean(); }
void a_count(const ValueReader& v) { v.integer(IntRange::at_least(0)); }
void a_positive_count(const ValueReader& v) { v.integer(IntRange::at_least(1)); }

// "gpu": [0, 1] (one node) or [[0, 1], [1, 2]] (a list per node).
void gpu_list(const ValueReader& v) {
  constexpr auto expected = "a list of GPU indices, or one list per node";
  for (const auto& entry : v.array(0, expected)) {
    if (entry.json().is_array()) {
      for (const auto& index : entry.array(0, "a list of GPU indices")) index.integer(IntRange::at_least(0));
    } else {
      entry.integer(IntRange::at_least(0));
    }
  }
}

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
                                               {"gpu", gpu_list},
                                               {"batchsize_eval", a_positive_count, kEvaluation},
                                               {"snapshot", a_count, kCheckpoints},
                                               {"snapshot_prefix", a_string, kCheckpoints},
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
                                               {"cache_eval_data", a_boolean, kEvaluation}};
  return table;
}

const std::vector<UnusedKey>& optimizer_table() {
  static const std::vector<UnusedKey> table = {{"learning_rate", optimizer_learning_rate_flag}};
  return table;
}

const std::vector<UnusedKey>& embedding_table() {
  static const std::vector<UnusedKey> table = {{"plan_file", a_string}};
  return table;
}

std::vector<std::string> keys_of(const std::vector<UnusedKey>& table) {
  std::vector<std::string> keys;
  for (const auto& entry : table) keys.push_back(entry.key);
  return keys;
}

void check_present(const ObjectReader& object, const std::vector<UnusedKey>& table) {
  for (const auto& entry : table)
    if (const auto value = object.optional(entry.key)) entry.check(*value);
}

void append_not_run(const ObjectReader& object, const std::vector<UnusedKey>& table, std::vector<std::string>& out) {
  for (const auto& entry : table)
    if (entry.not_run && object.has(entry.key)) out.push_back(object.path_of(entry.key) + " (" + entry.not_run + ")");
}

}  // namespace

const std::vector<std::string>& runnable_embedding_types() {
  static const std::vector<std::string> types = {"All2AllDenseEmbedding", "DistributedSlotSparseEmbeddingHash",
                                                 "DistributedSparseEmbedding", "LocalizedSlotSparseEmbeddingHash",
                                                 kShardedEmbedding};
  return types;
}

const std::vector<std::string>& known_embedding_types() {
  static const std::vector<std::string> types = {"LocalizedSlotSparseEmbeddingOneHot", "HybridSparseEmbedding"};
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
  return types;
}

std::vector<std::string> not_runnable_layer_types() {
  std::vector<std::string> types = known_embedding_types();
  types.insert(types.end(), known_dense_layer_types().begin(), known_dense_layer_types().end());
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

const std::vector<std::string>& unused_solver_keys() {
  static const std::vector<std::string> keys = keys_of(solver_table());
  return keys;
}
void check_unused_solver_keys(const ObjectReader& solver) { check_present(solver, solver_table()); }
void append_solver_keys_not_run(const ObjectReader& solver, std::vector<std::string>& not_run) {
  append_not_run(solver, solver_table(), not_run);
}

const std::vector<std::string>& unused_data_keys() {
  static const std::vector<std::string> keys = keys_of(data_table());
  return keys;
}
void check_unused_data_keys(const ObjectReader& data) { check_present(data, data_table()); }
void append_data_keys_not_run(const ObjectReader& data, std::vector<std::string>& not_run) {
  append_not_run(data, data_table(), not_run);
}

const std::vector<std::string>& unused_optimizer_keys() {
  static const std::vector<std::string> keys = keys_of(optimizer_table());
  return keys;
}
void check_unused_optimizer_keys(const ObjectReader& optimizer) { check_present(optimizer, optimizer_table()); }

const std::vector<std::string>& unused_embedding_keys() {
  static const std::vector<std::string> keys = keys_of(embedding_table());
  return keys;
}
void check_unused_embedding_keys(const ObjectReader& embedding) { check_present(embedding, embedding_table()); }

}  // namespace embscale::config::hugectr
