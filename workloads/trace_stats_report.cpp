#include "workloads/trace_stats_report.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "report/summary.hpp"

namespace embscale::workloads {
namespace {

using report::SummaryRow;

std::string top_label(std::int64_t per_mille) {
  return per_mille % 10 == 0 ? std::to_string(per_mille / 10) + "%" : "0." + std::to_string(per_mille) + "%";
}

SummaryRow key_row(const std::string& name, const KeyStats& stats) {
  SummaryRow row{{"slot", name},
                 {"records", stats.records},
                 {"keys", stats.accesses},
                 {"unique", stats.unique_keys},
                 {"nnz min", stats.bag_nnz_min},
                 {"nnz mean", stats.bag_nnz_mean},
                 {"nnz max", stats.bag_nnz_max}};
  for (std::size_t i = 0; i < kTopPerMille.size(); ++i)
    row.push_back({"top " + top_label(kTopPerMille[i]), stats.top_share[i]});
  const std::string exponent = report::format_value(stats.zipf.exponent) + (stats.zipf.at_bound ? "*" : "");
  row.push_back({"zipf s", exponent});
  row.push_back({"s.e.", stats.zipf.standard_error});
  row.push_back({"fit n", stats.zipf.ranks});
  row.push_back({"fit KS", stats.zipf.ks_distance});
  return row;
}

std::string reuse_text(const ReuseDistanceStats& reuse) {
  const auto share = [&](std::int64_t count) {
    return reuse.accesses == 0 ? 0.0 : static_cast<double>(count) / static_cast<double>(reuse.accesses);
  };
  std::string out =
      "reuse distances of the whole stream: distinct other keys since the previous access of the same key\n"
      "  (cold: first accesses, which have none; median, p90, p99 over the others)\n";
  out += report::format_summary_table({{{"accesses", reuse.accesses},
                                        {"cold", reuse.cold},
                                        {"cold share", share(reuse.cold)},
                                        {"median", reuse.median},
                                        {"p90", reuse.p90},
                                        {"p99", reuse.p99}}},
                                      0);
  std::vector<SummaryRow> histogram;
  for (std::size_t i = 0; i < reuse.histogram.size(); ++i) {
    const std::string range =
        i == 0 ? "0"
               : "[" + std::to_string(std::int64_t{1} << (i - 1)) + ", " + std::to_string(std::int64_t{1} << i) + ")";
    histogram.push_back({{"distance", range}, {"accesses", reuse.histogram[i]}, {"share", share(reuse.histogram[i])}});
  }
  if (!histogram.empty())
    out += "\nby distance (accesses in each power-of-two range)\n" + report::format_summary_table(histogram, 0);
  std::vector<SummaryRow> curve;
  for (const LruPoint& point : reuse.lru_curve)
    curve.push_back({{"capacity", point.capacity}, {"hit ratio", point.hit_ratio}});
  if (!curve.empty())
    out += "\nhit ratio of an LRU cache by its capacity in keys\n" + report::format_summary_table(curve, 0);
  return out;
}

// NaN (a figure that could not be computed) as null in the document itself, not only when dumped.
nlohmann::json number_or_null(double x) { return std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x); }

nlohmann::json key_json(const KeyStats& stats) {
  nlohmann::json top = nlohmann::json::array();
  for (std::size_t i = 0; i < kTopPerMille.size(); ++i)
    top.push_back({{"per_mille", kTopPerMille[i]}, {"keys", stats.top_keys[i]}, {"share", stats.top_share[i]}});
  const ZipfFit& zipf = stats.zipf;
  return {{"records", stats.records},
          {"accesses", stats.accesses},
          {"unique_keys", stats.unique_keys},
          {"bags", stats.bags},
          {"bag_nnz_min", stats.bag_nnz_min},
          {"bag_nnz_mean", stats.bag_nnz_mean},
          {"bag_nnz_max", stats.bag_nnz_max},
          {"top", top},
          {"zipf",
           {{"exponent", number_or_null(zipf.exponent)},
            {"standard_error", number_or_null(zipf.standard_error)},
            {"log_likelihood", number_or_null(zipf.log_likelihood)},
            {"ks_distance", number_or_null(zipf.ks_distance)},
            {"ranks", zipf.ranks},
            {"accesses", zipf.accesses},
            {"at_bound", zipf.at_bound}}}};
}

nlohmann::json reuse_json(const ReuseDistanceStats& reuse) {
  nlohmann::json curve = nlohmann::json::array();
  for (const LruPoint& point : reuse.lru_curve)
    curve.push_back({{"capacity", point.capacity}, {"hit_ratio", point.hit_ratio}});
  return {{"accesses", reuse.accesses}, {"cold", reuse.cold}, {"distinct", reuse.distinct},   {"median", reuse.median},
          {"p90", reuse.p90},           {"p99", reuse.p99},   {"histogram", reuse.histogram}, {"lru_curve", curve}};
}

// What every column of the key table is (its names must stay short to fit a terminal).
constexpr const char* kKeyTableLegend =
    "keys per slot, then all slots together (\"all\")\n"
    "  records: samples; keys: accesses, repeats included; unique: distinct keys; nnz: keys per bag\n"
    "  top x%: share of the accesses that go to the hottest x% of the distinct keys\n"
    "  zipf s: maximum-likelihood Zipf exponent (* on a bound of [0, 10]; nan: fewer than 2 keys);\n"
    "    s.e.: its standard error, a lower bound (accesses are correlated)\n"
    "  fit n: the key space the fit ranks over (slot_size_array when known, else the distinct keys seen);\n"
    "    fit KS: Kolmogorov-Smirnov distance between the observed and the fitted rank shares\n";

// The "all" row pools the slots' keys into one ranking: it describes one table holding every
// slot (unified keys, as an embedding table sees them), which no per-slot figure does, so it is
// kept; the footnote says it is no average of the slots' exponents.
constexpr const char* kPooledFootnote =
    "  all: top x% and zipf s are of every slot's keys ranked together (one key space of fit n keys,\n"
    "    what one table holding all slots sees), not averages of the slots' figures\n";

}  // namespace

std::string format_trace_stats(const TraceStats& stats) {
  std::vector<SummaryRow> rows;
  for (std::size_t j = 0; j < stats.slots.size(); ++j) rows.push_back(key_row(std::to_string(j), stats.slots[j]));
  rows.push_back(key_row("all", stats.total));
  std::string out = kKeyTableLegend + report::format_summary_table(rows, 0) + kPooledFootnote;
  if (stats.reuse) out += "\n" + reuse_text(*stats.reuse);
  return out;
}

nlohmann::json trace_stats_json(const TraceStats& stats) {
  nlohmann::json slots = nlohmann::json::array();
  for (const KeyStats& slot : stats.slots) slots.push_back(key_json(slot));
  return {{"slots", slots},
          {"total", key_json(stats.total)},
          {"reuse", stats.reuse ? reuse_json(*stats.reuse) : nlohmann::json(nullptr)}};
}

}  // namespace embscale::workloads
