// The "optimizer" section: the global optimizer and every per-layer one (layers.cpp calls
// parse_optimizer for a layer's own). Which types run, the hparam block and keys each reads, and
// their defaults are here; the formulas are in lib/embedding/optimizers.
#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "config/hugectr_names.hpp"
#include "config/sections.hpp"
#include "core/error.hpp"

namespace embscale::config {
namespace {

std::vector<std::string> with(std::vector<std::string> keys, const std::vector<std::string>& more) {
  keys.insert(keys.end(), more.begin(), more.end());
  return keys;
}

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// The optimizers embscale runs: the config's name (HugeCTR's, and "RowWiseAdaGrad" for FBGEMM's
// EXACT_ROWWISE_ADAGRAD, which HugeCTR lacks), the hyper-parameter block it reads and that block's
// keys (HugeCTR's names).
struct OptimizerKind {
  std::string name;
  OptimizerType type;
  std::string block;
  std::vector<std::string> keys;
};

const std::vector<OptimizerKind>& kinds() {
  static const std::vector<OptimizerKind> table = {
      {"SGD", OptimizerType::kSGD, "sgd_hparam", {"learning_rate", "atomic_update"}},
      {"MomentumSGD", OptimizerType::kMomentumSGD, "momentum_sgd_hparam", {"learning_rate", "momentum_factor"}},
      {"Nesterov", OptimizerType::kNesterov, "nesterov_hparam", {"learning_rate", "momentum_factor"}},
      {"Adam", OptimizerType::kAdam, "adam_hparam", {"learning_rate", "beta1", "beta2", "epsilon"}},
      {"AdaGrad", OptimizerType::kAdaGrad, "adagrad_hparam", {"learning_rate", "initial_accu_value", "epsilon"}},
      {"RowWiseAdaGrad", OptimizerType::kRowWiseAdaGrad, "adagrad_hparam",
       {"learning_rate", "initial_accu_value", "epsilon"}}};
  return table;
}

// Blocks of HugeCTR optimizers embscale does not run (their types are refused), and their type.
const std::vector<std::pair<std::string, std::string>>& not_run_blocks() {
  static const std::vector<std::pair<std::string, std::string>> table = {{"ftrl_hparam", "Ftrl"}};
  return table;
}

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const auto& kind : kinds()) all.push_back(kind.name);
    return all;
  }();
  return names;
}

// Every *_hparam key an optimizer object may hold, each once.
const std::vector<std::string>& hparam_blocks() {
  static const std::vector<std::string> blocks = [] {
    std::vector<std::string> all;
    for (const auto& kind : kinds())
      if (!contains(all, kind.block)) all.push_back(kind.block);
    for (const auto& [block, type] : not_run_blocks()) all.push_back(block);
    return all;
  }();
  return blocks;
}

const OptimizerKind* find_kind(const std::string& name) {
  for (const auto& kind : kinds())
    if (kind.name == name) return &kind;
  return nullptr;
}

// Another type's block beside this type's is a config written for another optimizer (or a type
// changed and its block forgotten): refused, naming the types that read it, not silently ignored.
void refuse_other_blocks(const ObjectReader& r, const OptimizerKind& kind) {
  for (const auto& block : hparam_blocks()) {
    const auto other = block == kind.block ? std::nullopt : r.optional(block);
    if (!other) continue;
    std::vector<std::string> readers;
    for (const auto& k : kinds())
      if (k.block == block) readers.push_back(k.name);
    std::string note;
    for (const auto& [not_run, type] : not_run_blocks()) {
      if (not_run != block) continue;
      readers.push_back(type);
      note = " (not run by embscale)";
    }
    other->fail_with("the hyper-parameters of " + quoted_list(readers) + note + ", but the type is \"" + kind.name +
                     "\", which reads " + kind.block);
  }
}

// Likewise a key of another type's block inside this one (beta1 in sgd_hparam).
void refuse_other_keys(const ObjectReader& h, const OptimizerKind& kind) {
  for (const auto& other : kinds())
    for (const auto& key : other.keys) {
      const auto value = contains(kind.keys, key) ? std::nullopt : h.optional(key);
      if (!value) continue;
      std::vector<std::string> readers;
      for (const auto& k : kinds())
        if (contains(k.keys, key)) readers.push_back(k.name);
      value->fail_with("a hyper-parameter of " + quoted_list(readers) + ", not of \"" + kind.name + "\"; " +
                       kind.block + " takes " + quoted_list(kind.keys));
    }
}

// update_type (HugeCTR's default "Local"), or HugeCTR's older boolean global_update.
UpdateType parse_update_type(const ObjectReader& r, const std::string& type_name) {
  if (const auto global = r.optional("global_update")) {
    if (r.has("update_type")) global->fail_with("give update_type or HugeCTR's older global_update, not both");
    return global->boolean() ? UpdateType::kGlobal : UpdateType::kLocal;
  }
  const auto update = r.optional("update_type");
  if (!update) return UpdateType::kLocal;
  const auto name = update->one_of(hugectr::known_update_types());
  if (name == "Global") return UpdateType::kGlobal;
  if (name == "LazyGlobal") {
    // HugeCTR defines the lazy catch-up for Adam's moments only (and throws for the others).
    if (type_name != "Adam")
      update->fail_with("\"LazyGlobal\" is defined for \"Adam\" only (as in HugeCTR), got type \"" + type_name +
                        "\"; use \"Local\" or \"Global\"");
    return UpdateType::kLazyGlobal;
  }
  return UpdateType::kLocal;
}

// Momentum and Adam's betas: a factor of 1 never decays (and divides by zero in Adam's bias
// correction 1 - beta1^t).
const NumberRange kDecay = NumberRange::from_up_to(0.0, 1.0);
// Epsilon keeps w -= lr m / (sqrt(v) + eps) finite when a row's accumulator is 0 (a row whose
// every gradient so far was 0, e.g. an untouched row under the Global update).
const NumberRange kEpsilon = NumberRange::above(0.0);
// FBGEMM's default eps of EXACT_ROWWISE_ADAGRAD (HugeCTR's AdaGrad default is 1e-7).
constexpr double kRowWiseAdaGradEpsilon = 1e-8;

// Reads the type's block into `o`; absent fields keep Optimizer's defaults (HugeCTR's
// CreateOptimizer defaults; the learning rate has none there and is required).
void read_hparam(const ObjectReader& h, const OptimizerKind& kind, Optimizer& o) {
  refuse_other_keys(h, kind);
  h.only_keys(kind.keys);
  switch (o.type) {
    case OptimizerType::kSGD:
      if (const auto atomic = h.optional("atomic_update")) o.atomic_update = atomic->boolean();
      break;
    case OptimizerType::kMomentumSGD:
    case OptimizerType::kNesterov:
      o.momentum_factor = h.number_or("momentum_factor", o.momentum_factor, kDecay);
      break;
    case OptimizerType::kAdam:
      o.beta1 = h.number_or("beta1", o.beta1, kDecay);
      o.beta2 = h.number_or("beta2", o.beta2, kDecay);
      o.epsilon = h.number_or("epsilon", o.epsilon, kEpsilon);
      break;
    case OptimizerType::kAdaGrad:
    case OptimizerType::kRowWiseAdaGrad:
      o.initial_accu_value = h.number_or("initial_accu_value", o.initial_accu_value,
                                         NumberRange::between(0.0, std::numeric_limits<double>::infinity()));
      if (o.type == OptimizerType::kRowWiseAdaGrad) o.epsilon = kRowWiseAdaGradEpsilon;
      o.epsilon = h.number_or("epsilon", o.epsilon, kEpsilon);
      break;
  }
  o.learning_rate = h.number("learning_rate", NumberRange::above(0.0));
}

}  // namespace

Optimizer parse_optimizer(const ObjectReader& r) {
  r.only_keys(with(with({"type", "update_type", "global_update"}, hparam_blocks()), hugectr::unused_optimizer_keys()));

  // The type decides which hparam block is read, so it is checked first.
  const auto type_value = r.required("type", quoted_list(optimizer_names()));
  const auto name = type_value.string();
  if (contains(hugectr::known_optimizer_types(), name))
    type_value.fail_with("\"" + name + "\" is a HugeCTR optimizer embscale does not run; supported: " +
                         quoted_list(optimizer_names()));
  const OptimizerKind* kind = find_kind(name);
  if (kind == nullptr)
    type_value.fail(quoted_list(optimizer_names()),
                    did_you_mean(name, with(optimizer_names(), hugectr::known_optimizer_types())));
  refuse_other_blocks(r, *kind);

  Optimizer o;
  o.type = kind->type;
  o.update_type = parse_update_type(r, name);
  read_hparam(r.object(kind->block), *kind, o);
  hugectr::check_unused_optimizer_keys(r);
  return o;
}

std::string to_string(OptimizerType t) {
  for (const auto& kind : kinds())
    if (kind.type == t) return kind.name;
  return "optimizer type " + std::to_string(static_cast<int>(t));  // a value cast from outside the enum
}

std::string to_string(UpdateType t) {
  switch (t) {
    case UpdateType::kLocal: return "Local";
    case UpdateType::kGlobal: return "Global";
    case UpdateType::kLazyGlobal: return "LazyGlobal";
  }
  return "update type " + std::to_string(static_cast<int>(t));
}

}  // namespace embscale::config
