#include "report/compare.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/statistics.hpp"
#include "report/run_pairing.hpp"

namespace embscale::report {
namespace {

using Runs = std::vector<const ReportData::Run*>;

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

bool is_phase(const std::string& figure) { return figure.rfind("phase:", 0) == 0; }

// The figure a pair's step-time ratio is taken from: a run's step time, a benchmark's real time.
bool is_step_figure(const std::string& figure) { return figure == "step_time" || figure == "real_time"; }

bool gated(const std::string& figure, const GateSelection& gate) {
  if (is_step_figure(figure) || figure == "throughput_samples_per_s") return gate.step;
  if (is_phase(figure)) return gate.phases;
  if (figure == "bytes_sent") return gate.bytes;
  return gate.other;
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
  } else if (is_phase(figure)) {
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

// One figure of one pair, before Holm: medians, change, the one-sided p-values.
FigureComparison compare_figure(const RunPair& pair, const std::string& figure, const CompareOptions& o) {
  FigureComparison f;
  f.run = pair.label;
  f.figure = figure;
  f.higher_is_better = figure == "throughput_samples_per_s";
  f.gated = gated(figure, o.gate);
  const bool repetitions = pair.base.size() >= 2 && pair.next.size() >= 2;
  std::string how_base, how_next;
  const auto a = samples_of(pair.base, figure, repetitions, o, how_base);
  const auto b = samples_of(pair.next, figure, repetitions, o, how_next);
  if (a.empty() || b.empty()) {
    f.sampling = "";  // the figure is missing on one side: not compared
    return f;
  }
  f.sampling = how_base + " (" + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + ")";
  f.base = median(a);
  f.next = median(b);
  f.relative_change = f.base != 0 ? (f.next - f.base) / f.base : 0.0;
  const auto worse = f.higher_is_better ? Alternative::kLess : Alternative::kGreater;
  const auto better = f.higher_is_better ? Alternative::kGreater : Alternative::kLess;
  f.p_worse = mann_whitney_u(a, b, worse).p_value;
  const double p_better = mann_whitney_u(a, b, better).p_value;
  const double worsening = f.higher_is_better ? -f.relative_change : f.relative_change;
  f.p_value = worsening >= 0 ? f.p_worse : p_better;
  f.improvement = p_better < o.alpha && -worsening > o.min_change;
  return f;
}

// Rule 3's size test: large enough to count. A phase must move the step, not only itself.
bool large_enough(FigureComparison& f, double base_step, const CompareOptions& o) {
  const double worsening = f.higher_is_better ? -f.relative_change : f.relative_change;
  if (worsening <= o.min_change) return false;
  if (is_phase(f.figure) && base_step > 0 && f.next - f.base <= o.min_change * base_step) {
    f.below_floor = true;
    return false;
  }
  return true;
}

}  // namespace

GateSelection parse_gate_selection(const std::vector<std::string>& names) {
  GateSelection gate{false, false, false, false};
  for (const auto& name : names) {
    if (name == "step") gate.step = true;
    else if (name == "phases") gate.phases = true;
    else if (name == "bytes") gate.bytes = true;
    else if (name == "other") gate.other = true;
    else if (name == "all") gate = {true, true, true, true};
    else if (name == "none") {}
    else throw InputError("--gate: expected step, phases, bytes, other, all or none (comma-separated), got \"" + name + "\"");
  }
  return gate;
}

std::string describe(const GateSelection& gate) {
  std::string text;
  const auto add = [&](bool on, const char* what) {
    if (on) text += (text.empty() ? "" : ", ") + std::string(what);
  };
  add(gate.step, "step time and throughput (benchmarks: real_time)");
  add(gate.phases, "phases");
  add(gate.bytes, "bytes sent");
  add(gate.other, "other series");
  return text.empty() ? "none" : text;
}

Comparison compare_reports(const ReportData& base, const ReportData& next, const CompareOptions& o) {
  EMBSCALE_EXPECTS(o.alpha > 0 && o.alpha < 1 && o.min_change >= 0 && o.blocks >= 2, "invalid compare options");
  const Pairing pairing = pair_runs(base, next, o.ignored_parameters);
  Comparison out;
  out.matched_runs = pairing.pairs.size();
  out.unpaired_base = pairing.unpaired_base;
  out.unpaired_next = pairing.unpaired_next;
  double log_ratio_sum = 0;
  std::vector<double> base_steps;  // per figure: its pair's base step time (the phase floor)
  for (const auto& pair : pairing.pairs) {
    double base_step = 0;
    for (const auto& figure : figures_of(*pair.base.front())) {
      auto f = compare_figure(pair, figure, o);
      if (f.sampling.empty()) continue;
      if (is_step_figure(figure)) {
        base_step = f.base;
        if (f.base > 0 && f.next > 0) {
          log_ratio_sum += std::log(f.next / f.base);
          ++out.step_time_ratios;
        }
      }
      out.figures.push_back(std::move(f));
      base_steps.push_back(base_step);  // figures_of lists the step time first
    }
  }
  // Holm's family: every gated figure of every pair.
  std::vector<double> family;
  for (const auto& f : out.figures)
    if (f.gated) family.push_back(f.p_worse);
  const auto adjusted = holm_adjusted(family);
  out.gated_tests = family.size();
  std::size_t next_adjusted = 0;
  for (std::size_t i = 0; i < out.figures.size(); ++i) {
    auto& f = out.figures[i];
    const bool large = large_enough(f, base_steps[i], o);
    if (f.gated) {
      f.p_holm = adjusted[next_adjusted++];
      f.regression = f.p_holm < o.alpha && large;
    } else {
      f.slower = f.p_worse < o.alpha && large;
    }
    out.any_regression = out.any_regression || f.regression;
  }
  if (out.step_time_ratios > 0)
    out.step_time_ratio_geomean = std::exp(log_ratio_sum / static_cast<double>(out.step_time_ratios));
  return out;
}

}  // namespace embscale::report
