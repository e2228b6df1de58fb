#include "report/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/statistics.hpp"

namespace embscale::report {
namespace {

using Runs = std::vector<const ReportData::Run*>;

std::string run_key(const ReportData::Run& run) {
  std::vector<std::string> parts;
  for (const auto& p : run.parameters) parts.push_back(p.name + "=" + format_value(p.value));
  std::sort(parts.begin(), parts.end());
  std::string key;
  for (const auto& part : parts) key += (key.empty() ? "" : " ") + part;
  return key;
}

std::map<std::string, Runs> by_parameters(const ReportData& data) {
  std::map<std::string, Runs> groups;
  for (const auto& run : data.runs) groups[run_key(run)].push_back(&run);
  return groups;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::int64_t integer_parameter(const ReportData::Run& run, const std::string& name) {
  for (const auto& p : run.parameters)
    if (p.name == name)
      if (const auto* i = std::get_if<std::int64_t>(&p.value)) return *i;
  return 0;
}

// Per-iteration values of a figure in one run (empty when the run lacks it).
std::vector<double> figure_series(const ReportData::Run& run, const std::string& figure) {
  std::vector<double> out;
  const auto step = run.series.find("step_time");
  if (figure == "step_time") {
    if (step != run.series.end()) out = step->second;
  } else if (figure == "throughput_samples_per_s") {
    const auto batch = static_cast<double>(integer_parameter(run, "batchsize"));
    if (step != run.series.end() && batch > 0)
      for (const double t : step->second) out.push_back(t > 0 ? batch / t : 0.0);
  } else if (figure == "bytes_sent") {
    if (const auto c = run.counters.find("bytes_sent"); c != run.counters.end())
      for (std::size_t i = 0; i < c->second.rows; ++i) {
        double sum = 0;
        for (std::size_t r = 0; r < c->second.cols; ++r) sum += static_cast<double>(c->second(i, r));
        out.push_back(sum);
      }
  } else if (const auto own = run.series.find(figure); own != run.series.end()) {
    out = own->second;
  } else if (figure.rfind("phase:", 0) == 0) {
    if (const auto t = run.timings.find(figure.substr(6)); t != run.timings.end())
      for (std::size_t i = 0; i < t->second.rows; ++i) {  // the slowest rank sets the pace
        double worst = 0;
        for (std::size_t r = 0; r < t->second.cols; ++r) worst = std::max(worst, t->second(i, r));
        out.push_back(worst);
      }
  }
  return out;
}

std::size_t warmup(std::size_t n, const CompareOptions& o) {
  return static_cast<std::size_t>(std::floor(static_cast<double>(n) * o.warmup_fraction));
}

// The samples of a figure for one side, and how they were formed.
std::vector<double> samples_of(const Runs& runs, const std::string& figure, bool repetitions,
                               const CompareOptions& o, std::string& how) {
  std::vector<double> samples;
  if (repetitions) {
    for (const auto* run : runs) {
      const auto series = figure_series(*run, figure);
      if (series.empty()) continue;
      const std::size_t skip = warmup(series.size(), o);
      samples.push_back(median(std::vector<double>(series.begin() + static_cast<long>(skip), series.end())));
    }
    how = "repetitions";
    return samples;
  }
  const auto series = figure_series(*runs.front(), figure);
  if (series.empty()) return samples;
  const std::size_t skip = warmup(series.size(), o);
  const std::size_t blocks = std::min(o.blocks, series.size() - skip);
  how = "block means";
  return blocks == 0 ? samples : block_means(series, skip, blocks);
}

std::vector<std::string> figures_of(const ReportData::Run& run) {
  std::vector<std::string> figures;
  if (run.series.count("step_time")) figures = {"step_time", "throughput_samples_per_s"};
  for (const auto& phase : run.phase_names) figures.push_back("phase:" + phase);
  if (run.counters.count("bytes_sent")) figures.push_back("bytes_sent");
  // Other series are figures of their own (Google Benchmark's real_time, cpu_time); the loss is
  // a model figure, not a performance one.
  for (const auto& [name, values] : run.series)
    if (name != "step_time" && name != "loss") figures.push_back(name);
  return figures;
}

}  // namespace

Comparison compare_reports(const ReportData& base, const ReportData& next, const CompareOptions& o) {
  EMBSCALE_EXPECTS(o.alpha > 0 && o.alpha < 1 && o.min_change >= 0 && o.blocks >= 2, "invalid compare options");
  const auto base_groups = by_parameters(base);
  const auto next_groups = by_parameters(next);
  Comparison out;
  double log_ratio_sum = 0;
  std::size_t log_ratios = 0;
  for (const auto& [key, base_runs] : base_groups) {
    const auto match = next_groups.find(key);
    if (match == next_groups.end()) continue;
    ++out.matched_runs;
    const Runs& next_runs = match->second;
    const bool repetitions = base_runs.size() >= 2 && next_runs.size() >= 2;
    for (const auto& figure : figures_of(*base_runs.front())) {
      FigureComparison f;
      f.run = key;
      f.figure = figure;
      f.higher_is_better = figure == "throughput_samples_per_s";
      std::string how_base, how_next;
      const auto a = samples_of(base_runs, figure, repetitions, o, how_base);
      const auto b = samples_of(next_runs, figure, repetitions, o, how_next);
      if (a.empty() || b.empty()) continue;
      f.sampling = how_base + " (" + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + ")";
      f.base = median(a);
      f.next = median(b);
      f.relative_change = f.base != 0 ? (f.next - f.base) / f.base : 0.0;
      const auto worse = f.higher_is_better ? Alternative::kLess : Alternative::kGreater;
      const auto better = f.higher_is_better ? Alternative::kGreater : Alternative::kLess;
      const double p_worse = mann_whitney_u(a, b, worse).p_value;
      const double p_better = mann_whitney_u(a, b, better).p_value;
      const double worsening = f.higher_is_better ? -f.relative_change : f.relative_change;
      f.p_value = worsening >= 0 ? p_worse : p_better;
      f.regression = p_worse < o.alpha && worsening > o.min_change;
      f.improvement = p_better < o.alpha && -worsening > o.min_change;
      out.any_regression = out.any_regression || f.regression;
      const bool is_time = figure == "step_time" || figure.rfind("phase:", 0) == 0 || figure == "real_time" ||
                           figure == "cpu_time";
      if (is_time && f.base > 0 && f.next > 0) {
        log_ratio_sum += std::log(f.next / f.base);
        ++log_ratios;
      }
      out.figures.push_back(std::move(f));
    }
  }
  if (out.matched_runs == 0) {
    const auto keys = [](const std::map<std::string, Runs>& groups) {
      std::string list;
      for (const auto& [key, runs] : groups) list += "\n    " + key;
      return list.empty() ? std::string("\n    (no runs)") : list;
    };
    throw InputError("the reports have no runs with the same parameters\n  base has:" + keys(base_groups) +
                     "\n  new has:" + keys(next_groups));
  }
  out.geomean_time_ratio = log_ratios ? std::exp(log_ratio_sum / static_cast<double>(log_ratios)) : 1.0;
  return out;
}

std::string format_comparison(const Comparison& c) {
  std::string text;
  char line[512];
  std::string current_run;
  for (const auto& f : c.figures) {
    if (f.run != current_run) {
      text += (current_run.empty() ? "" : "\n") + std::string("run: ") + f.run + "\n";
      text += "samples: " + f.sampling + " after the warm-up\n";
      std::snprintf(line, sizeof line, "  %-28s %12s %12s %9s %9s  %s\n", "figure", "base", "new", "change", "p", "verdict");
      text += line;
      current_run = f.run;
    }
    const char* verdict = f.regression ? "REGRESSION" : f.improvement ? "improved" : "same";
    std::snprintf(line, sizeof line, "  %-28s %12s %12s %+8.1f%% %9.3g  %s\n", f.figure.c_str(),
                  format_value(f.base).c_str(), format_value(f.next).c_str(), 100.0 * f.relative_change, f.p_value,
                  verdict);
    text += line;
  }
  std::snprintf(line, sizeof line, "\ngeometric mean of time ratios (new/base): %.4f over %zu matched run(s)\n",
                c.geomean_time_ratio, c.matched_runs);
  text += line;
  text += c.any_regression ? "verdict: REGRESSION\n" : "verdict: no significant regression\n";
  return text;
}

nlohmann::json comparison_to_json(const Comparison& c, const CompareOptions& o) {
  nlohmann::json figures = nlohmann::json::array();
  for (const auto& f : c.figures)
    figures.push_back({{"run", f.run}, {"figure", f.figure}, {"higher_is_better", f.higher_is_better},
                       {"base", f.base}, {"new", f.next}, {"relative_change", f.relative_change},
                       {"p_value", f.p_value}, {"sampling", f.sampling}, {"regression", f.regression},
                       {"improvement", f.improvement}});
  return {{"alpha", o.alpha}, {"min_change", o.min_change}, {"matched_runs", c.matched_runs},
          {"geomean_time_ratio", c.geomean_time_ratio}, {"regression", c.any_regression}, {"figures", figures}};
}

}  // namespace embscale::report
