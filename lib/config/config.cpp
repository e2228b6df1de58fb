#include "config/config.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "config/json_reader.hpp"
#include "core/error.hpp"

namespace embscale::config {
namespace {

// HugeCTR solver keys accepted for compatibility with HugeCTR files; embscale does not use them.
const std::vector<std::string> kHugeCtrSolverKeys = {
    "lr_policy", "gpu", "batchsize_eval", "snapshot", "snapshot_prefix", "eval_interval", "eval_batches",
    "mixed_precision", "eval_metrics", "enable_tf32_compute", "input_key_type", "dense model_file",
    "sparse_model_file", "max_eval_batches"};
const std::vector<std::string> kHugeCtrDataKeys = {"source", "eval_source", "check", "num_samples",
                                                   "eval_num_samples", "cache_eval_data", "float_label_dense"};

const std::vector<std::string> kRunnableEmbeddings = {"All2AllDenseEmbedding"};
const std::vector<std::string> kKnownEmbeddings = {"DistributedSlotSparseEmbeddingHash", "LocalizedSlotSparseEmbeddingHash",
                                                   "LocalizedSlotSparseEmbeddingOneHot", "DistributedSparseEmbedding"};
const std::vector<std::string> kHugeCtrDenseLayers = {
    "Reshape", "Concat", "Slice", "ELU", "ReLU", "InnerProduct", "FusedInnerProduct", "BinaryCrossEntropyLoss",
    "CrossEntropyLoss", "MultiCrossEntropyLoss", "Interaction", "BatchNorm", "Dropout", "FmOrder2",
    "MultiCross", "Add", "ReduceSum", "DotProduct", "Sigmoid", "WeightMultiply"};

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Optimizer parse_optimizer(const ObjectReader& r) {
  r.only_keys({"type", "update_type", "sgd_hparam", "adam_hparam", "momentum_sgd_hparam", "nesterov_hparam",
               "learning_rate"});
  const auto type = r.string("type");
  if (type == "Adam" || type == "MomentumSGD" || type == "Nesterov")
    throw InputError(r.origin() + ": " + r.path_of("type") + ": \"" + type +
                     "\" is a HugeCTR optimizer embscale does not run yet; supported: \"SGD\"");
  if (type != "SGD") r.fail("type", "\"SGD\" (HugeCTR's Adam, MomentumSGD and Nesterov are not run yet)");
  if (r.has("update_type")) {
    const auto update = r.one_of("update_type", {"Local", "Global", "LazyGlobal"});
    if (update != "Local")
      throw InputError(r.origin() + ": " + r.path_of("update_type") + ": only \"Local\" (update the rows a batch touched) is run in this version, got \"" + update + "\"");
  }
  const auto hparam = r.object("sgd_hparam");
  hparam.only_keys({"learning_rate", "atomic_update"});
  Optimizer o;
  o.type = OptimizerType::kSGD;
  o.learning_rate = hparam.number("learning_rate", 0.0, std::numeric_limits<double>::infinity(), true);
  return o;
}

Solver parse_solver(const ObjectReader& r) {
  r.only_keys(concat({"batchsize", "max_iter", "warmup_iter", "display", "seed"}, kHugeCtrSolverKeys));
  if (r.has("lr_policy")) r.one_of("lr_policy", {"fixed"});
  Solver s;
  s.batchsize = r.integer("batchsize", 1);
  s.max_iter = r.integer("max_iter", 1);
  s.warmup_iter = r.integer_or("warmup_iter", 0, 0);
  s.display = r.integer_or("display", 0, 0);
  s.seed = r.unsigned_or("seed", 0);
  return s;
}

Combiner parse_combiner(const ObjectReader& r) {
  const auto& v = r.at("combiner");
  if (v == 0 || v == "sum") return Combiner::kSum;
  if (v == 1 || v == "mean") return Combiner::kMean;
  r.fail("combiner", "0, 1, \"sum\" or \"mean\"");
}

DataLayer parse_data(const ObjectReader& r, const std::string& name) {
  r.only_keys(concat({"name", "type", "format", "slot_size_array", "synthetic", "label", "dense", "sparse"}, kHugeCtrDataKeys));
  DataLayer d;
  d.name = name;
  d.format = r.string_or("format", "Norm");
  if (d.format == "Norm" || d.format == "Raw" || d.format == "Parquet")
    throw InputError(r.origin() + ": " + r.path_of("format") + ": the HugeCTR format \"" + d.format +
                     "\" is not read by this version; supported: \"Synthetic\"");
  if (d.format != "Synthetic") r.fail("format", "\"Synthetic\"");

  const auto& sizes = r.at("slot_size_array");
  if (!sizes.is_array() || sizes.empty()) r.fail("slot_size_array", "a non-empty array of integers >= 1");
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (!sizes[i].is_number_integer() || sizes[i].get<std::int64_t>() < 1)
      r.fail_at(r.path_of("slot_size_array") + "[" + std::to_string(i) + "]", sizes[i], "an integer >= 1");
    d.slot_size_array.push_back(sizes[i].get<std::int64_t>());
  }

  const auto syn = r.object("synthetic");
  syn.only_keys({"key_distribution", "zipf_alpha", "nnz_per_slot"});
  const auto distribution = syn.has("key_distribution") ? syn.one_of("key_distribution", {"zipf", "uniform"}) : "zipf";
  d.synthetic.distribution = distribution == "zipf" ? KeyDistribution::kZipf : KeyDistribution::kUniform;
  d.synthetic.zipf_alpha = syn.number_or("zipf_alpha", 1.05, 0.0, 100.0);
  d.synthetic.nnz_per_slot = syn.integer_or("nnz_per_slot", 1, 1, 1 << 20);

  if (r.has("label")) {
    const auto label = r.object("label");
    label.only_keys({"top", "label_dim"});
    d.label_dim = static_cast<std::int32_t>(label.integer_or("label_dim", 1, 1, 1 << 16));
  }
  if (r.has("dense")) {
    const auto dense = r.object("dense");
    dense.only_keys({"top", "dense_dim"});
    d.dense_dim = static_cast<std::int32_t>(dense.integer_or("dense_dim", 0, 0, 1 << 20));
  }
  const auto& sparse = r.at("sparse");
  if (!sparse.is_array() || sparse.size() != 1)
    r.fail("sparse", "an array with one sparse input (several are not run by this version)");
  const ObjectReader input(sparse[0], r.path_of("sparse") + "[0]", r.origin());
  input.only_keys({"top", "type", "slot_num", "max_feature_num_per_sample", "max_nnz", "is_required"});
  d.sparse_top = input.string("top");
  if (input.has("type")) input.one_of("type", {"DistributedSlot", "LocalizedSlot"});
  d.slot_num = static_cast<std::int32_t>(input.integer("slot_num", 1, 1 << 20));
  if (static_cast<std::size_t>(d.slot_num) != d.slot_size_array.size())
    input.fail("slot_num", "the number of entries of " + r.path_of("slot_size_array") + " (" +
                               std::to_string(d.slot_size_array.size()) + ")");
  return d;
}

EmbeddingLayer parse_embedding(const ObjectReader& r, const std::string& name, const std::string& type,
                               const Optimizer& global) {
  r.only_keys({"name", "type", "bottom", "top", "sparse_embedding_hparam", "optimizer", "plan_file"});
  EmbeddingLayer e;
  e.name = name;
  e.type = type;
  e.bottom = r.string("bottom");
  e.top = r.string("top");
  const auto h = r.object("sparse_embedding_hparam");
  h.only_keys({"max_vocabulary_size_per_gpu", "embedding_vec_size", "combiner"});
  e.max_vocabulary_size_per_gpu = h.integer("max_vocabulary_size_per_gpu", 1);
  e.embedding_vec_size = static_cast<std::int32_t>(h.integer("embedding_vec_size", 1, 1 << 16));
  e.combiner = parse_combiner(h);
  e.optimizer = r.has("optimizer") ? parse_optimizer(r.object("optimizer")) : global;
  return e;
}

}  // namespace

Config parse_config(const nlohmann::json& json, const std::string& origin) {
  const ObjectReader top(json, "", origin);
  top.only_keys({"schema_version", "solver", "optimizer", "layers"});
  Config c;
  c.source = json;
  if (!top.has("schema_version"))
    throw InputError(origin + ": schema_version: required key is missing (this embscale reads version " +
                     std::to_string(kSchemaVersion) + ")");
  const auto& version = top.at("schema_version");
  if (!version.is_number_integer() || version.get<std::int64_t>() != kSchemaVersion)
    top.fail("schema_version", std::to_string(kSchemaVersion) + " (the only schema version this embscale reads)");
  c.schema_version = kSchemaVersion;
  c.solver = parse_solver(top.object("solver"));
  c.optimizer = parse_optimizer(top.object("optimizer"));

  const auto& layers = top.at("layers");
  if (!layers.is_array() || layers.empty()) top.fail("layers", "a non-empty array of layer objects");
  std::set<std::string> names;
  bool have_data = false;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& layer = layers[i];
    const bool named = layer.is_object() && layer.contains("name") && layer["name"].is_string();
    const std::string name = named ? layer["name"].get<std::string>() : "";
    const ObjectReader r(layer, "layers[" + (named ? name : std::to_string(i)) + "]", origin);
    r.string("name");
    if (!names.insert(name).second) r.fail("name", "a name no other layer has");
    const auto type = r.string("type");
    if (type == "Data") {
      if (have_data) r.fail("type", "one \"Data\" layer only");
      c.data = parse_data(r, name);
      have_data = true;
    } else if (std::find(kRunnableEmbeddings.begin(), kRunnableEmbeddings.end(), type) != kRunnableEmbeddings.end()) {
      c.embeddings.push_back(parse_embedding(r, name, type, c.optimizer));
    } else if (std::find(kKnownEmbeddings.begin(), kKnownEmbeddings.end(), type) != kKnownEmbeddings.end() ||
               std::find(kHugeCtrDenseLayers.begin(), kHugeCtrDenseLayers.end(), type) != kHugeCtrDenseLayers.end()) {
      throw InputError(origin + ": " + r.path_of("type") + ": \"" + type +
                       "\" is a HugeCTR layer this version does not run; runnable: \"Data\", " +
                       quoted_list(kRunnableEmbeddings));
    } else {
      const auto all = concat(concat(concat({"Data"}, kRunnableEmbeddings), kKnownEmbeddings), kHugeCtrDenseLayers);
      const auto suggestion = nearest_key(type, all);
      throw InputError(origin + ": " + r.path_of("type") + ": unknown layer type \"" + type + "\"" +
                       (suggestion.empty() ? "" : "; did you mean \"" + suggestion + "\"?") +
                       " (runnable: \"Data\", " + quoted_list(kRunnableEmbeddings) + ")");
    }
  }
  if (!have_data) throw InputError(origin + ": layers: expected one layer of type \"Data\", got none");
  if (c.embeddings.empty())
    throw InputError(origin + ": layers: expected at least one embedding layer (" + quoted_list(kRunnableEmbeddings) + "), got none");
  for (const auto& e : c.embeddings)
    if (e.bottom != c.data.sparse_top)
      throw InputError(origin + ": layers[" + e.name + "].bottom: expected the Data layer's sparse top \"" +
                       c.data.sparse_top + "\", got \"" + e.bottom + "\"");
  return c;
}

Config parse_config_text(const std::string& text, const std::string& origin) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // Line and column of the byte where parsing failed (1-based).
    const std::size_t end = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string reason = e.what();
    if (const auto pos = reason.find("syntax error while parsing"); pos != std::string::npos) reason = reason.substr(pos);
    throw InputError(origin + ":" + std::to_string(line) + ":" + std::to_string(column) + ": invalid JSON: " + reason);
  }
  return parse_config(json, origin);
}

Config load_config_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open config file: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_config_text(text.str(), path.string());
}

Config default_config() { return parse_config_text(default_config_text(), "<embedded default>"); }

std::int64_t total_vocabulary(const DataLayer& data) {
  std::int64_t total = 0;
  for (const auto size : data.slot_size_array) total += size;
  return total;
}

std::string to_string(Combiner c) { return c == Combiner::kSum ? "sum" : "mean"; }
std::string to_string(KeyDistribution d) { return d == KeyDistribution::kZipf ? "zipf" : "uniform"; }

}  // namespace embscale::config
