// An embedding layer's "storage" block: static rows or the dynamic KV table, with dynamicemb's
// option names (DynamicEmbTableOptions, DynamicEmbInitializerArgs). The ranges are the
// KV table's own (kv::check_options); each is checked here so the message names the JSON path.
#include <string>
#include <vector>

#include "config/sections.hpp"
#include "kv/score_rules.hpp"

namespace embscale::config {
namespace {

constexpr std::int64_t kMaxCapacity = std::int64_t{1} << 40;

kv::InitializerArgs parse_initializer(const ObjectReader& r, kv::InitializerArgs args) {
  r.only_keys({"mode", "mean", "std_dev", "lower", "upper", "value"});
  static const std::vector<std::string> modes = {"UNIFORM", "NORMAL", "TRUNCATED_NORMAL", "CONSTANT", "DEBUG"};
  if (r.has("mode")) {
    const auto mode = r.one_of("mode", modes);
    for (std::size_t i = 0; i < modes.size(); ++i)
      if (mode == modes[i]) args.mode = static_cast<kv::InitializerMode>(i);
  }
  const auto any = NumberRange::between(-1e30, 1e30);
  args.mean = r.number_or("mean", args.mean, any);
  args.std_dev = r.number_or("std_dev", args.std_dev, NumberRange::above(0.0));
  args.lower = r.number_or("lower", args.lower, any);
  args.upper = r.number_or("upper", args.upper, any);
  args.value = r.number_or("value", args.value, any);
  if (args.lower > args.upper) r.required("lower", "").fail("a number <= upper (" + std::to_string(args.upper) + ")");
  return args;
}

kv::AdmissionOptions parse_admission(const ObjectReader& r) {
  r.only_keys({"strategy", "threshold", "max_count", "depth", "cells_per_slot", "aging_factor", "conservative_update"});
  kv::AdmissionOptions a;
  const auto strategy = r.one_of_or("strategy", "none", {"none", "k_count", "tiny_lfu"});
  a.kind = strategy == "k_count"    ? kv::AdmissionOptions::Kind::kKCount
           : strategy == "tiny_lfu" ? kv::AdmissionOptions::Kind::kTinyLfu
                                    : kv::AdmissionOptions::Kind::kNone;
  a.max_count = static_cast<int>(r.integer_or("max_count", a.max_count, IntRange::between(1, 255)));
  a.threshold_k = static_cast<int>(r.integer_or("threshold", a.threshold_k, IntRange::between(1, a.max_count)));
  a.depth = static_cast<int>(r.integer_or("depth", a.depth, IntRange::between(1, 8)));
  a.cells_per_slot = r.number_or("cells_per_slot", a.cells_per_slot, NumberRange::between(1e-6, 64.0));
  a.aging_factor = r.number_or("aging_factor", a.aging_factor, NumberRange::between(0.0, 1e6));
  if (const auto conservative = r.optional("conservative_update")) a.conservative_update = conservative->boolean();
  return a;
}

kv::ValueType parse_dtype(const ObjectReader& r) {
  const auto dtype = r.one_of_or("embedding_dtype", "fp32", {"fp32", "fp16", "bf16"});
  return dtype == "fp16"   ? kv::ValueType::kFloat16
         : dtype == "bf16" ? kv::ValueType::kBFloat16
                           : kv::ValueType::kFloat32;
}

void parse_dynamic(const ObjectReader& r, kv::TableOptions& t) {
  t.max_capacity = r.integer("max_capacity", IntRange::between(16, kMaxCapacity));
  t.bucket_capacity = r.integer_or("bucket_capacity", t.bucket_capacity, IntRange::between(16, 1024));
  if ((t.bucket_capacity & (t.bucket_capacity - 1)) != 0)
    r.required("bucket_capacity", "").fail("a power of two in [16, 1024]");
  if (t.max_capacity < t.bucket_capacity)
    r.required("max_capacity", "").fail("an integer >= bucket_capacity (" + std::to_string(t.bucket_capacity) + ")");
  t.init_capacity = r.integer_or("init_capacity", 0, IntRange::between(0, t.max_capacity));
  t.max_load_factor = r.number_or("max_load_factor", t.max_load_factor, NumberRange::between(1e-3, 1.0));
  std::vector<std::string> strategies;
  for (const auto& rules : kv::kScoreRules) strategies.emplace_back(rules.name);
  const auto strategy = r.one_of_or("score_strategy", "TIMESTAMP", strategies);
  for (const auto& rules : kv::kScoreRules)
    if (rules.name == strategy) t.score_strategy = rules.strategy;
  const auto check = r.one_of_or("safe_check_mode", "IGNORE", {"ERROR", "WARNING", "IGNORE"});
  t.safe_check = check == "ERROR"     ? kv::SafeCheck::kError
                 : check == "WARNING" ? kv::SafeCheck::kWarning
                                      : kv::SafeCheck::kIgnore;
  if (r.has("admission")) t.admission = parse_admission(r.object("admission"));
  if (kv::needs_admission_estimate(kv::score_rules(t.score_strategy)) &&
      t.admission.kind == kv::AdmissionOptions::Kind::kNone)
    r.required("score_strategy", "")
        .fail_with(strategy +
                   " needs an admission filter (its new keys score the filter's estimate): set admission.strategy to "
                   "\"k_count\" or \"tiny_lfu\"");
}

// The drivers of the caller-clocked strategies; each only with its strategies.
void parse_score_drivers(const ObjectReader& r, EmbeddingStorage& s) {
  const auto strategy = kv::score_rules(s.table.score_strategy);
  const bool epochs =
      s.table.score_strategy == kv::ScoreStrategy::kEpochLru || s.table.score_strategy == kv::ScoreStrategy::kEpochLfu;
  if (const auto epoch_steps = r.optional("epoch_steps")) {
    if (!epochs)
      epoch_steps->fail_with("epoch_steps sets the epoch of EPOCH_LRU and EPOCH_LFU; this table's score_strategy is " +
                             std::string(strategy.name));
    s.epoch_steps = epoch_steps->integer(IntRange::at_least(0));
  }
  if (const auto custom = r.optional("custom_score")) {
    if (s.table.score_strategy != kv::ScoreStrategy::kCustomized)
      custom->fail_with("custom_score sets the scores of CUSTOMIZED; this table's score_strategy is " +
                        std::string(strategy.name));
    s.custom_score_step = custom->one_of({"step", "none"}) == "step";
  }
  // The two tiers keep their own tables' clocks, which no driver reaches.
  if (s.two_tier()) {
    for (const char* key : {"epoch_steps", "custom_score"})
      if (const auto value = r.optional(key))
        value->fail_with(std::string(key) +
                         " drives a table of one tier; this layer's rows are in two (caching or "
                         "global_hbm_for_values)");
    s.custom_score_step = false;
  }
}

void parse_tiers(const ObjectReader& r, EmbeddingStorage& s) {
  if (const auto caching = r.optional("caching")) s.caching = caching->boolean();
  s.global_hbm_for_values = r.integer_or("global_hbm_for_values", 0, IntRange::between(0, std::int64_t{1} << 50));
  if (s.caching && s.global_hbm_for_values == 0)
    r.required("global_hbm_for_values", "bytes of rows for the fast tier (caching needs a budget)")
        .fail("an integer > 0 (the fast tier's bytes of rows) with caching");
  if (r.has("slow_directory")) s.slow_directory = r.string("slow_directory");
}

}  // namespace

EmbeddingStorage parse_embedding_storage(const ObjectReader& r) {
  r.only_keys({"type", "embedding_dtype", "training", "initializer_args", "eval_initializer_args", "max_capacity",
               "init_capacity", "max_load_factor", "bucket_capacity", "score_strategy", "safe_check_mode", "admission",
               "caching", "global_hbm_for_values", "slow_directory", "epoch_steps", "custom_score"});
  EmbeddingStorage s;
  s.dynamic = r.one_of_or("type", "static", {"static", "dynamic"}) == "dynamic";
  auto& t = s.table;
  t.value_type = parse_dtype(r);
  if (const auto training = r.optional("training")) t.training = training->boolean();
  if (r.has("initializer_args")) t.initializer = parse_initializer(r.object("initializer_args"), t.initializer);
  if (r.has("eval_initializer_args"))
    t.eval_initializer = parse_initializer(r.object("eval_initializer_args"), t.eval_initializer);
  if (s.dynamic) {
    parse_dynamic(r, t);
    parse_tiers(r, s);
    parse_score_drivers(r, s);
  } else {
    for (const char* key :
         {"max_capacity", "init_capacity", "max_load_factor", "bucket_capacity", "score_strategy", "safe_check_mode",
          "admission", "caching", "global_hbm_for_values", "slow_directory", "epoch_steps", "custom_score"})
      if (const auto value = r.optional(key))
        value->fail_with(std::string("\"") + key +
                         "\" is an option of dynamic storage; this layer's storage.type is "
                         "\"static\" (set \"type\": \"dynamic\" to use the KV table)");
  }
  return s;
}

}  // namespace embscale::config
