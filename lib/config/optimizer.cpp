// The "optimizer" section: the global optimizer and every per-layer one (layers.cpp calls
// parse_optimizer for a layer's own), read by the rows of optimizer_rules.hpp (which types run,
// the hparam block and keys each reads, their ranges and defaults); the formulas are in
// lib/embedding/optimizers.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "config/hugectr_names.hpp"
#include "config/optimizer_rules.hpp"
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

// Blocks of HugeCTR optimizers embscale does not run (their types are refused), and their type.
const std::vector<std::pair<std::string, std::string>>& not_run_blocks() {
  static const std::vector<std::pair<std::string, std::string>> table = {{"ftrl_hparam", "Ftrl"}};
  return table;
}

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const auto& rules : optimizer_rules()) all.emplace_back(rules.name);
    return all;
  }();
  return names;
}

// The keys of a row's block, in its order.
std::vector<std::string> keys_of(const OptimizerRules& rules) {
  std::vector<std::string> keys;
  for (const auto& parameter : rules.parameters) keys.emplace_back(parameter.key);
  return keys;
}

// Every *_hparam key an optimizer object may hold, each once.
const std::vector<std::string>& hparam_blocks() {
  static const std::vector<std::string> blocks = [] {
    std::vector<std::string> all;
    for (const auto& rules : optimizer_rules())
      if (!contains(all, rules.block)) all.emplace_back(rules.block);
    for (const auto& [block, type] : not_run_blocks()) all.push_back(block);
    return all;
  }();
  return blocks;
}

// Another type's block beside this type's is a config written for another optimizer (or a type
// changed and its block forgotten): refused, naming the types that read it, not silently ignored.
void refuse_other_blocks(const ObjectReader& r, const OptimizerRules& kind) {
  for (const auto& block : hparam_blocks()) {
    const auto other = block == kind.block ? std::nullopt : r.optional(block);
    if (!other) continue;
    std::vector<std::string> readers;
    for (const auto& k : optimizer_rules())
      if (k.block == block) readers.emplace_back(k.name);
    std::string note;
    for (const auto& [not_run, type] : not_run_blocks()) {
      if (not_run != block) continue;
      readers.push_back(type);
      note = " (not run by embscale)";
    }
    other->fail_with("the hyper-parameters of " + quoted_list(readers) + note + ", but the type is \"" +
                     std::string(kind.name) + "\", which reads " + kind.block);
  }
}

// Likewise a key of another type's block inside this one (beta1 in sgd_hparam).
void refuse_other_keys(const ObjectReader& h, const OptimizerRules& kind) {
  const std::vector<std::string> own = keys_of(kind);
  for (const auto& other : optimizer_rules())
    for (const auto& key : keys_of(other)) {
      const auto value = contains(own, key) ? std::nullopt : h.optional(key);
      if (!value) continue;
      std::vector<std::string> readers;
      for (const auto& k : optimizer_rules())
        if (contains(keys_of(k), key)) readers.emplace_back(k.name);
      value->fail_with("a hyper-parameter of " + quoted_list(readers) + ", not of \"" + std::string(kind.name) +
                       "\"; " + kind.block + " takes " + quoted_list(own));
    }
}

// update_type (HugeCTR's default "Local"), or HugeCTR's older boolean global_update.
UpdateType parse_update_type(const ObjectReader& r, const OptimizerRules& kind) {
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
    if (!kind.lazy_global)
      update->fail_with("\"LazyGlobal\" is defined for \"Adam\" only (as in HugeCTR), got type \"" +
                        std::string(kind.name) + "\"; use \"Local\" or \"Global\"");
    return UpdateType::kLazyGlobal;
  }
  return UpdateType::kLocal;
}

// Reads the type's block into `o` by the row's hyper-parameters; absent ones keep Optimizer's
// defaults or the row's (HugeCTR's CreateOptimizer defaults; the learning rate has none there and
// is required).
void read_hparam(const ObjectReader& h, const OptimizerRules& kind, Optimizer& o) {
  refuse_other_keys(h, kind);
  h.only_keys(keys_of(kind));
  for (const auto& parameter : kind.parameters) {
    if (parameter.flag) {
      if (const auto value = h.optional(parameter.key)) o.*parameter.flag = value->boolean();
    } else if (parameter.integer) {
      const IntRange range{static_cast<std::int64_t>(parameter.range.min),
                           static_cast<std::int64_t>(parameter.range.max)};
      o.*parameter.number =
          static_cast<double>(h.integer_or(parameter.key, static_cast<std::int64_t>(o.*parameter.number), range));
    } else if (parameter.required) {
      o.*parameter.number = h.number(parameter.key, parameter.range);
    } else {
      o.*parameter.number =
          h.number_or(parameter.key, parameter.default_value.value_or(o.*parameter.number), parameter.range);
    }
  }
}

}  // namespace

double Optimizer::learning_rate_at(std::int64_t step) const {
  const double s = static_cast<double>(step);
  const double warmup = std::max(1.0, warmup_steps);
  if (s <= warmup) return learning_rate * s / warmup;
  if (decay_start <= 0.0 || s <= decay_start) return learning_rate;
  // HugeCTR's factor ((decay_start + decay_steps - step) / decay_steps)^power, held at 0 past the
  // decay's end (HugeCTR's unsigned difference wraps there instead), and at least end_lr.
  const double left = std::max(0.0, decay_start + decay_steps - s) / decay_steps;
  return std::max(learning_rate * std::pow(left, decay_power), end_lr);
}

Optimizer parse_optimizer(const ObjectReader& r) {
  r.only_keys(hugectr::with_unused_keys(with({"type", "update_type", "global_update"}, hparam_blocks()),
                                        hugectr::UnusedIn::kOptimizer));

  // The type decides which hparam block is read, so it is checked first.
  const auto type_value = r.required("type", quoted_list(optimizer_names()));
  const auto name = type_value.string();
  if (contains(hugectr::known_optimizer_types(), name))
    type_value.fail_with(
        "\"" + name + "\" is a HugeCTR optimizer embscale does not run; supported: " + quoted_list(optimizer_names()));
  const OptimizerRules* kind = find_optimizer_rules(name);
  if (kind == nullptr)
    type_value.fail(quoted_list(optimizer_names()),
                    did_you_mean(name, with(optimizer_names(), hugectr::known_optimizer_types())));
  refuse_other_blocks(r, *kind);

  Optimizer o;
  o.type = kind->type;
  o.update_type = parse_update_type(r, *kind);
  read_hparam(r.object(kind->block), *kind, o);
  hugectr::check_unused_keys(r, hugectr::UnusedIn::kOptimizer);
  return o;
}

std::string to_string(OptimizerType t) {
  for (const auto& rules : optimizer_rules())
    if (rules.type == t) return rules.name;
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
