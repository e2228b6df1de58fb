// The "planner" section: what the sharding planner (lib/plan) assumes for layers with
// "sharding": "auto". The scheme names are lib/plan's to check (it knows which it models).
#include <string>

#include "config/sections.hpp"

namespace embscale::config {
namespace {

constexpr double kMaxSeconds = 1.0;         // per key, byte or call: anything larger is a unit mistake
constexpr double kMaxStepSeconds = 3600.0;  // a step target of more than an hour is a unit mistake

}  // namespace

bool is_auto_sharding(const std::string& sharding) {
  return sharding == kAutoSharding || sharding == kAutoSkewBlindSharding;
}

PlannerSettings parse_planner_settings(const ObjectReader& r) {
  r.only_keys({"memory_per_rank", "seconds_per_key", "seconds_per_row", "seconds_per_byte", "seconds_per_comm_byte",
               "seconds_per_collective", "seconds_per_slow_byte", "schemes", "all_layers", "target_step_seconds",
               "memory_headroom", "target_hit_rate", "max_ranks", "hardware"});
  PlannerSettings p;
  p.memory_per_rank = r.integer_or("memory_per_rank", 0, IntRange::between(0, std::int64_t{1} << 50));
  const auto seconds = [&](const char* key, std::optional<double>& out) {
    if (r.has(key)) out = r.number(key, NumberRange::between(0.0, kMaxSeconds));
  };
  seconds("seconds_per_key", p.seconds_per_key);
  seconds("seconds_per_row", p.seconds_per_row);
  seconds("seconds_per_byte", p.seconds_per_byte);
  seconds("seconds_per_comm_byte", p.seconds_per_comm_byte);
  seconds("seconds_per_collective", p.seconds_per_collective);
  seconds("seconds_per_slow_byte", p.seconds_per_slow_byte);
  if (const auto schemes = r.optional("schemes")) {
    for (const auto& item : schemes->array(1, "a non-empty array of scheme names")) {
      const std::string name = item.name();
      for (const auto& seen : p.schemes)
        if (seen == name) item.fail("a scheme not listed before");
      p.schemes.push_back(name);
    }
  }
  if (const auto all = r.optional("all_layers")) p.all_layers = all->boolean();
  if (r.has("target_step_seconds"))
    p.target_step_seconds = r.number("target_step_seconds", NumberRange{0.0, kMaxStepSeconds, true});
  p.memory_headroom = r.number_or("memory_headroom", 0.0, NumberRange::between(0.0, 0.9));
  if (r.has("target_hit_rate")) p.target_hit_rate = r.number("target_hit_rate", NumberRange::between(0.0, 1.0));
  p.max_ranks = r.integer_or("max_ranks", p.max_ranks, IntRange::between(1, std::int64_t{1} << 20));
  if (r.has("hardware")) p.hardware = r.name("hardware");
  return p;
}

}  // namespace embscale::config
