// TraceStats for people and for tools: an aligned text table (the layout of lib/report's summary
// tables) and JSON. `embscale trace stats` prints one of them.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>

#include "workloads/trace_stats.hpp"

namespace embscale::workloads {

// Three blocks: one line per slot plus "total" (records, keys, unique, keys per bag, top shares,
// Zipf s with its standard error, n and KS distance); then, when present, the reuse-distance
// summary, its power-of-two histogram and the LRU hit-ratio curve. Doubles with 4 significant
// digits; a Zipf exponent that could not be fitted prints "nan", one clipped by [0, 10] a "*".
std::string format_trace_stats(const TraceStats& stats);

// {"slots": [KeyStats...], "total": KeyStats, "reuse": {...} or null}, every figure of the
// structs under its field name (top shares as {"per_mille", "keys", "share"} objects). A Zipf
// figure that is NaN (nothing to fit) is null.
nlohmann::json trace_stats_json(const TraceStats& stats);

}  // namespace embscale::workloads
