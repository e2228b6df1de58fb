// The "planner" section: what the sharding planner (lib/plan) assumes for layers with
// "sharding": "auto". The scheme names are lib/plan's to check (it knows which it models).
#include <string>

#include "config/sections.hpp"

namespace embscale::config {
namespace {

constexpr double kMaxSeconds = 1.0;  // per key, byte or call: anything larger is a unit mistake

}  // namespace

bool is_auto_sharding(const std::string& sharding) {
  return sharding == kAutoSharding || sharding == kAutoSkewBlindSharding;
}

PlannerSettings parse_planner_settings(const ObjectReader& r) {
  r.only_keys({"memory_per_rank", "seconds_per_key", "seconds_per_row", "seconds_per_byte", "seconds_per_comm_byte",
               "seconds_per_collective", "schemes", "all_layers"});
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
  if (const auto schemes = r.optional("schemes")) {
    for (const auto& item : schemes->array(1, "a non-empty array of scheme names")) {
      const std::string name = item.name();
      for (const auto& seen : p.schemes)
        if (seen == name) item.fail("a scheme not listed before");
      p.schemes.push_back(name);
    }
  }
  if (const auto all = r.optional("all_layers")) p.all_layers = all->boolean();
  return p;
}

}  // namespace embscale::config
