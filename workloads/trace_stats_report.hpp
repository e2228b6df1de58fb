// TraceStats for people and for tools: an aligned text table (the layout of lib/report's summary
// tables) and JSON. `embscale trace stats` prints one of them.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>

#include "workloads/trace_stats.hpp"

namespace embscale::workloads {

// Three blocks, each headed by lines saying what its columns are: one line per slot plus "all"
// (records, keys, unique, keys per bag, top shares, Zipf s with its standard error, the fit's key
// space "fit n" and its KS distance), with a footnote that all's shares and exponent are of the
// slots' keys pooled into one ranking; then, when present, the reuse-distance summary, its
// power-of-two histogram and the LRU hit-ratio curve. Doubles with 4 significant digits; a Zipf
// exponent that could not be fitted prints "nan", one on a bound of [0, 10] a "*".
std::string format_trace_stats(const TraceStats& stats);

// {"slots": [KeyStats...], "total": KeyStats (the text's "all": its top shares and Zipf fit pool
// every slot's keys), "reuse": {...} or null}, every figure of the
// structs under its field name (top shares as {"per_mille", "keys", "share"} objects). A Zipf
// figure that is NaN (nothing to fit) is null.
nlohmann::json trace_stats_json(const TraceStats& stats);

}  // namespace embscale::workloads
