#include "report/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "core/statistics.hpp"
#include "report/figure_direction.hpp"
#include "report/run_pairing.hpp"

namespace embscale::report {
namespace {

using Runs = std::vector<const ReportData::Run*>;

// The interquartile range over the median's magnitude (0 with fewer than two samples).
double relative_spread(std::span<const double> v) {
  if (v.size() < 2) return 0.0;
  const double middle = std::fabs(median(v));
  return middle > 0 ? (quantile(v, 0.75) - quantile(v, 0.25)) / middle : 0.0;
}

bool has_parameter(const ReportData::Run& run, const std::string& name) {
  return std::any_of(run.parameters.begin(), run.parameters.end(), [&](const auto& p) { return p.name == name; });
}

std::int64_t integer_parameter(const ReportData::Run& run, const std::string& name) {
  for (const auto& p : run.parameters)
    if (p.name == name)
      if (const auto* i = std::get_if<std::int64_t>(&p.value)) return *i;
  return 0;
}

bool is_phase(const std::string& figure) { return figure.rfind("phase:", 0) == 0; }

// The model-quality figures: one value per run, from its evaluation table.
constexpr const char* kQualityFigure = "eval_auc";
constexpr const char* kEvaluationTable = "evaluation/scores";
bool is_quality(const std::string& figure) { return figure == kQualityFigure; }

// The dynamic tables' hit rate: per iteration, from the counters "hits" and "misses" (each layer's
// "<layer>.hits" too).
constexpr const char* kHitRateFigure = "hit_rate";
bool is_table_counter(const std::string& name, const std::string& counter) {
  return name == counter || name.ends_with("." + counter);
}

// The figure a pair's step-time ratio is taken from: a run's step time, a benchmark's real time.
bool is_step_figure(const std::string& figure) { return figure == "step_time" || figure == "real_time"; }

bool gated(const std::string& figure, const GateSelection& gate) {
  if (is_step_figure(figure) || figure == "throughput_samples_per_s") return gate.step;
  if (is_phase(figure)) return gate.phases;
  if (figure == "bytes_sent") return gate.bytes;
  if (is_quality(figure)) return gate.quality;
  if (figure == kHitRateFigure) return gate.hit_rate;
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
  } else if (figure == kHitRateFigure) {
    std::vector<double> hits, reads;
    for (const auto& [name, counts] : run.counters) {
      const bool hit = is_table_counter(name, "hits");
      if (!hit && !is_table_counter(name, "misses")) continue;
      hits.resize(std::max(hits.size(), counts.rows), 0.0);
      reads.resize(hits.size(), 0.0);
      for (std::size_t i = 0; i < counts.rows; ++i)
        for (std::size_t r = 0; r < counts.cols; ++r) {
          reads[i] += static_cast<double>(counts(i, r));
          if (hit) hits[i] += static_cast<double>(counts(i, r));
        }
    }
    for (std::size_t i = 0; i < hits.size(); ++i)
      if (reads[i] > 0) out.push_back(hits[i] / reads[i]);
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

// A figure's samples on both sides of a pair, and how they were formed.
struct Samples {
  std::vector<double> base, next;
  std::string how;
  bool repetitions = false;
};

std::vector<double> run_medians(const Runs& runs, const std::string& figure, const CompareOptions& o) {
  std::vector<double> medians;
  for (const auto* run : runs) {
    const auto series = figure_series(*run, figure);
    if (series.empty()) continue;
    const std::size_t skip = warmup(series.size(), o);
    medians.push_back(median(std::span<const double>(series).subspan(skip)));
  }
  return medians;
}

std::vector<double> first_run_block_means(const Runs& runs, const std::string& figure, const CompareOptions& o) {
  const auto series = figure_series(*runs.front(), figure);
  if (series.empty()) return {};
  const std::size_t skip = warmup(series.size(), o);
  const std::size_t blocks = std::min(o.blocks, series.size() - skip);
  return blocks == 0 ? std::vector<double>{} : block_means(series, skip, blocks);
}

// Repetitions when both sides have two or more runs; otherwise block means of each side's first
// run (and the sampling says which runs were left out). Empty samples: the side lacks the figure.
Samples samples_of(const RunPair& pair, const std::string& figure, const CompareOptions& o) {
  Samples s;
  if (pair.base.size() >= 2 && pair.next.size() >= 2) {
    s.base = run_medians(pair.base, figure, o);
    s.next = run_medians(pair.next, figure, o);
    s.how = "repetitions (" + std::to_string(s.base.size()) + " vs " + std::to_string(s.next.size()) + ")";
    s.repetitions = true;
    return s;
  }
  s.base = first_run_block_means(pair.base, figure, o);
  s.next = first_run_block_means(pair.next, figure, o);
  s.how = "block means (" + std::to_string(s.base.size()) + " vs " + std::to_string(s.next.size()) + ")";
  for (const auto& [runs, side] : {std::pair{&pair.base, "base"}, std::pair{&pair.next, "new"}})
    if (runs->size() > 1)
      s.how += "; the " + std::string(side) + " side's first of " + std::to_string(runs->size()) + " runs";
  return s;
}

// A run's last evaluation: its AUC and DeLong standard error (NaN in reports written before the
// column existed). Empty when the run has no evaluation table.
struct Evaluated {
  double auc = 0;
  double standard_error = 0;
};

std::optional<Evaluated> last_evaluation(const ReportData::Run& run) {
  const auto t = run.tables.find(kEvaluationTable);
  if (t == run.tables.end() || t->second.rows() == 0) return std::nullopt;
  const auto& table = t->second;
  const auto column = [&](const char* name) -> std::optional<std::size_t> {
    const auto at = std::find(table.columns.begin(), table.columns.end(), name);
    if (at == table.columns.end()) return std::nullopt;
    return static_cast<std::size_t>(at - table.columns.begin());
  };
  const auto auc = column("auc");
  if (!auc) return std::nullopt;
  const auto error = column("auc_stderr");
  const std::size_t last = table.rows() - 1;
  return Evaluated{table(last, *auc), error ? table(last, *error) : std::nan("")};
}

std::vector<Evaluated> evaluations_of(const Runs& runs) {
  std::vector<Evaluated> out;
  for (const auto* run : runs)
    if (const auto e = last_evaluation(*run)) out.push_back(*e);
  return out;
}

bool all_equal(const std::vector<Evaluated>& v) {
  return std::all_of(v.begin(), v.end(), [&](const Evaluated& e) { return e.auc == v.front().auc; });
}

// One-sided normal tail: P(Z > z).
double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// eval_auc of one pair (the header's quality rules): medians, change in AUC points, p-values.
void compare_quality(FigureComparison& f, const RunPair& pair, const CompareOptions& o) {
  const auto base = evaluations_of(pair.base), next = evaluations_of(pair.next);
  if (base.empty() || next.empty()) {
    f.missing_on = base.empty() ? "base" : "new";
    f.gated = false;
    return;
  }
  f.absolute = true;
  f.min_change = o.min_auc_change;
  const bool repetitions = base.size() >= 2 && next.size() >= 2 && !(all_equal(base) && all_equal(next));
  if (repetitions) {
    std::vector<double> b, n;
    for (const auto& e : base) b.push_back(e.auc);
    for (const auto& e : next) n.push_back(e.auc);
    f.base = median(b);
    f.next = median(n);
    f.p_worse = mann_whitney_u(b, n, Alternative::kLess).p_value;
    f.p_value = f.next <= f.base ? f.p_worse : mann_whitney_u(b, n, Alternative::kGreater).p_value;
    f.smallest_p = mann_whitney_smallest_p(b.size(), n.size());
    f.sampling = "the last evaluation's AUC of each run (" + std::to_string(b.size()) + " vs " +
                 std::to_string(n.size()) + " runs)";
  } else {
    f.base = base.front().auc;
    f.next = next.front().auc;
    const double error = std::hypot(base.front().standard_error, next.front().standard_error);
    const double z = error > 0 ? (f.base - f.next) / error : std::nan("");
    f.p_worse = std::isfinite(z) ? normal_upper_tail(z) : (f.next < f.base ? 0.0 : 1.0);
    f.p_value = f.next <= f.base ? f.p_worse : 1.0 - f.p_worse;
    f.smallest_p = 0.0;
    f.sampling = std::isfinite(error) && error > 0
                     ? "the last evaluation's AUC, a z-test over the DeLong standard errors (" +
                           format_value(base.front().standard_error) + ", " +
                           format_value(next.front().standard_error) + ")"
                     : "the last evaluation's AUC, without a standard error (a report from before it was recorded): "
                       "any drop is significant, the size rule alone judges";
    if (base.size() > 1 || next.size() > 1) f.sampling += "; the repetitions are of one seed, so one run a side";
  }
  f.relative_change = f.base != 0 ? (f.next - f.base) / f.base : 0.0;
  f.improvement = f.p_value < o.alpha && f.next > f.base && f.next - f.base > f.min_change;
}

// Whether a run's tables missed a read: only a dynamic table does (a static one holds every key
// it owns, and counts every read a hit).
bool has_dynamic_tables(const ReportData::Run& run) {
  for (const auto& [name, counts] : run.counters)
    if (is_table_counter(name, "misses"))
      for (std::size_t i = 0; i < counts.rows; ++i)
        for (std::size_t r = 0; r < counts.cols; ++r)
          if (counts(i, r) > 0) return true;
  return false;
}

// The figures of a run, in report order: step time and throughput, phases, bytes, other series.
// Throughput is samples per second: only runs with a batch (run reports) have it; a collectives
// run's step_time is one call, and its mpi_time (the bare MPI call) is an other series.
std::vector<std::string> figures_of(const ReportData::Run& run) {
  std::vector<std::string> figures;
  if (run.series.count("step_time")) {
    figures.push_back("step_time");
    if (has_parameter(run, "batchsize")) figures.push_back("throughput_samples_per_s");
  }
  for (const auto& phase : run.phase_names) figures.push_back("phase:" + phase);
  if (run.counters.count("bytes_sent")) figures.push_back("bytes_sent");
  if (has_dynamic_tables(run)) figures.push_back(kHitRateFigure);
  // Other series are figures of their own (Google Benchmark's real_time, cpu_time); the loss and
  // the batches' AUC are model figures, not performance ones.
  for (const auto& [name, values] : run.series)
    if (name != "step_time" && name != "loss" && name != "auc") figures.push_back(name);
  if (last_evaluation(run)) figures.push_back(kQualityFigure);
  return figures;
}

// Both sides' figures: the base's in its order, then those only the new side has.
std::vector<std::string> figures_of(const RunPair& pair) {
  auto figures = figures_of(*pair.base.front());
  for (auto& figure : figures_of(*pair.next.front()))
    if (std::find(figures.begin(), figures.end(), figure) == figures.end()) figures.push_back(std::move(figure));
  return figures;
}

// How much worse, in the units the size rule reads: relative, or AUC points for quality figures.
double worsening(const FigureComparison& f) {
  const double change = f.absolute ? f.next - f.base : f.relative_change;
  return f.higher_is_better ? -change : change;
}

// A figure of two single runs judged block against block (hit_rate): both runs pass through the
// same iterations of a table that warms up, so block i of one is paired with block i of the other
// and the sign test counts the blocks that fell; the shared trend, which Mann-Whitney over the
// blocks would count as noise, cancels.
void compare_paired_blocks(FigureComparison& f, const Samples& s, const CompareOptions& o) {
  const std::size_t n = std::min(s.base.size(), s.next.size());
  const std::span<const double> base(s.base.data(), n), next(s.next.data(), n);
  f.sampling = "paired block means (" + std::to_string(n) + " pairs, the same iterations of both runs), a sign test";
  f.base = median(base);
  f.next = median(next);
  f.relative_change = f.base != 0 ? (f.next - f.base) / f.base : 0.0;
  f.base_spread = relative_spread(base);
  f.next_spread = relative_spread(next);
  const auto worse = f.higher_is_better ? Alternative::kLess : Alternative::kGreater;
  const auto better = f.higher_is_better ? Alternative::kGreater : Alternative::kLess;
  f.p_worse = sign_test(base, next, worse).p_value;
  f.smallest_p = std::ldexp(1.0, -static_cast<int>(n));
  const double p_better = sign_test(base, next, better).p_value;
  f.p_value = worsening(f) >= 0 ? f.p_worse : p_better;
  f.improvement = p_better < o.alpha && -worsening(f) > f.min_change;
}

// One figure of one pair, before Holm: medians, change, the one-sided p-values.
FigureComparison compare_figure(const RunPair& pair, const std::string& figure, const CompareOptions& o) {
  FigureComparison f;
  f.run = pair.label;
  f.figure = figure;
  f.higher_is_better = higher_is_better(figure);
  f.gated = gated(figure, o.gate);
  if (is_quality(figure)) {
    compare_quality(f, pair, o);
    return f;
  }
  const Samples s = samples_of(pair, figure, o);
  if (s.base.empty() || s.next.empty()) {
    f.missing_on = s.base.empty() ? "base" : "new";
    f.gated = false;  // nothing to test
    return f;
  }
  f.sampling = s.how;
  f.min_change = o.min_change.value_or(s.repetitions ? kMinChangeRepetitions : kMinChangeSingleRuns);
  if (figure == kHitRateFigure) {  // points of hit rate, as eval_auc's are AUC points
    f.absolute = true;
    f.min_change = o.min_hit_rate_change;
    if (!s.repetitions) {
      compare_paired_blocks(f, s, o);
      return f;
    }
  }
  f.base = median(s.base);
  f.next = median(s.next);
  f.relative_change = f.base != 0 ? (f.next - f.base) / f.base : 0.0;
  f.base_spread = relative_spread(s.base);
  f.next_spread = relative_spread(s.next);
  const auto worse = f.higher_is_better ? Alternative::kLess : Alternative::kGreater;
  const auto better = f.higher_is_better ? Alternative::kGreater : Alternative::kLess;
  f.p_worse = mann_whitney_u(s.base, s.next, worse).p_value;
  f.smallest_p = mann_whitney_smallest_p(s.base.size(), s.next.size());
  const double p_better = mann_whitney_u(s.base, s.next, better).p_value;
  f.p_value = worsening(f) >= 0 ? f.p_worse : p_better;
  f.improvement = p_better < o.alpha && -worsening(f) > f.min_change;
  return f;
}

// Holm's family is one hypothesis per pair and question: the throughput is the batch over the
// same iterations' step times, so "slower" is one question for both (their p-values coincide
// with repetitions and nearly so with block means; the larger one stands for both).
std::string hypothesis_of(const FigureComparison& f, std::size_t pair) {
  const std::string question = f.figure == "throughput_samples_per_s" ? "step_time" : f.figure;
  return std::to_string(pair) + "/" + question;
}

// Repetitions a side with which Holm over m tests can reach alpha at all: the exact one-sided
// Mann-Whitney p of r against r runs is at least 1 / C(2r, r).
std::size_t repetitions_needed(std::size_t m, double alpha) {
  std::size_t r = 2;
  while (static_cast<double>(m) * mann_whitney_smallest_p(r, r) >= alpha) ++r;
  return r;
}

// The verdict of one figure once its Holm-adjusted p-value is known (rules 1 to 3 of the header).
void judge(FigureComparison& f, double base_step, double alpha) {
  const bool significant = (f.gated ? f.p_holm : f.p_worse) < alpha;
  // The floor: a phase must add min_change of the pair's step time, not only of itself.
  f.below_floor = is_phase(f.figure) && base_step > 0 && f.next - f.base <= f.min_change * base_step;
  const bool large = worsening(f) > f.min_change && !f.below_floor;
  if (f.gated) f.regression = significant && large;
  else f.slower = significant && large;
}

}  // namespace

GateSelection parse_gate_selection(const std::vector<std::string>& names) {
  GateSelection gate{false, false, false, false, false, false};
  for (const auto& name : names) {
    if (name == "step") gate.step = true;
    else if (name == "phases") gate.phases = true;
    else if (name == "bytes") gate.bytes = true;
    else if (name == "other") gate.other = true;
    else if (name == "quality") gate.quality = true;
    else if (name == "hit_rate") gate.hit_rate = true;
    else if (name == "all") gate = {true, true, true, true, true, true};
    else if (name == "none") {
    } else
      throw InputError(
          "--gate: expected step, phases, bytes, other, quality, hit_rate, all or none (comma-separated), "
          "got \"" +
          name + "\"");
  }
  return gate;
}

std::string describe_as_names(const GateSelection& gate) {
  std::string text;
  for (const auto& [on, name] :
       {std::pair{gate.step, "step"}, std::pair{gate.phases, "phases"}, std::pair{gate.bytes, "bytes"},
        std::pair{gate.other, "other"}, std::pair{gate.quality, "quality"}, std::pair{gate.hit_rate, "hit_rate"}})
    if (on) text += (text.empty() ? "" : ",") + std::string(name);
  return text.empty() ? "none" : text;
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
  add(gate.quality, "the last evaluation's AUC (runs with one)");
  add(gate.hit_rate, "the dynamic tables' hit rate (runs with one)");
  return text.empty() ? "none" : text;
}

Comparison compare_reports(const ReportData& base, const ReportData& next, const CompareOptions& o) {
  EMBSCALE_EXPECTS(o.alpha > 0 && o.alpha < 1 && o.min_change.value_or(0) >= 0 && o.min_auc_change >= 0 &&
                       o.min_hit_rate_change >= 0 && o.blocks >= 2,
                   "invalid compare options");
  const Pairing pairing = pair_runs(base, next, o.ignored_parameters);
  Comparison out;
  out.matched_runs = pairing.pairs.size();
  out.unpaired_base = pairing.unpaired_base;
  out.unpaired_next = pairing.unpaired_next;
  std::vector<std::size_t> pair_of;    // per figure: the index of its pair
  std::vector<double> pair_base_step;  // per pair: the median base step time (0: none)
  double log_ratio_sum = 0;
  for (std::size_t p = 0; p < pairing.pairs.size(); ++p) {
    pair_base_step.push_back(0.0);
    out.paired_base_runs += pairing.pairs[p].base.size();
    out.paired_next_runs += pairing.pairs[p].next.size();
    for (const auto& figure : figures_of(pairing.pairs[p])) {
      auto f = compare_figure(pairing.pairs[p], figure, o);
      if (is_step_figure(figure) && f.missing_on.empty()) {
        pair_base_step[p] = f.base;
        if (f.base > 0 && f.next > 0) {
          log_ratio_sum += std::log(f.next / f.base);
          ++out.step_time_ratios;
        }
      }
      out.figures.push_back(std::move(f));
      pair_of.push_back(p);
    }
  }
  if (out.step_time_ratios > 0)
    out.step_time_ratio_geomean = std::exp(log_ratio_sum / static_cast<double>(out.step_time_ratios));

  // Holm's family: one hypothesis per pair and question, its p-value the largest of its figures'.
  std::map<std::string, double> family_p;
  for (std::size_t i = 0; i < out.figures.size(); ++i) {
    const auto& f = out.figures[i];
    if (!f.gated) continue;
    const auto key = hypothesis_of(f, pair_of[i]);
    family_p[key] = std::max(family_p.count(key) ? family_p[key] : 0.0, f.p_worse);
  }
  std::vector<double> p_values;
  for (const auto& [key, p] : family_p) p_values.push_back(p);
  const auto adjusted = holm_adjusted(p_values);
  std::map<std::string, double> family_holm;
  std::size_t k = 0;
  for (const auto& [key, p] : family_p) family_holm[key] = adjusted[k++];
  out.gated_tests = family_p.size();
  for (std::size_t i = 0; i < out.figures.size(); ++i) {
    auto& f = out.figures[i];
    if (!f.missing_on.empty()) continue;
    if (f.gated) f.p_holm = family_holm[hypothesis_of(f, pair_of[i])];
    judge(f, pair_base_step[pair_of[i]], o.alpha);
    out.any_regression = out.any_regression || f.regression;
  }

  // What the verdict cannot see: a gate with nothing to test, tests that cannot reach alpha.
  if (out.gated_tests == 0 && (o.gate.step || o.gate.phases || o.gate.bytes || o.gate.other || o.gate.quality))
    throw InputError("no gated figure (" + describe(o.gate) +
                     ") is in both reports: the verdict would test nothing (--gate chooses the figures)");
  const double m = static_cast<double>(out.gated_tests);
  for (std::size_t i = 0; i < out.figures.size(); ++i) {
    const auto& f = out.figures[i];
    if (!f.gated || f.figure == "throughput_samples_per_s" || m * f.smallest_p < o.alpha) continue;
    out.warnings.push_back(f.run + ": " + f.figure + " cannot fail the gate: with " + f.sampling +
                           " the smallest one-sided p-value is " + format_value(f.smallest_p) + ", and Holm over " +
                           std::to_string(out.gated_tests) + " test(s) needs it below " + format_value(o.alpha / m) +
                           ": give each side at least " + std::to_string(repetitions_needed(out.gated_tests, o.alpha)) +
                           " repetitions");
  }
  // A gated figure whose own noise exceeds the change it is judged by: the size rule then passes
  // or fails on noise as much as on a shift (more repetitions narrow the medians' spread).
  for (const auto& f : out.figures) {
    if (!f.gated || !f.missing_on.empty() || f.figure == "throughput_samples_per_s" || f.absolute) continue;
    for (const auto& [side, spread] : {std::pair{"base", f.base_spread}, std::pair{"new", f.next_spread}})
      if (spread > f.min_change)
        out.warnings.push_back(f.run + ": " + f.figure + ": the " + side + " side's own spread (interquartile range " +
                               format_value(100.0 * spread) + " % of its median, " + f.sampling +
                               ") is larger than the min-change of " + format_value(100.0 * f.min_change) +
                               " % it is judged by: more repetitions, or a quieter machine, make the verdict firmer");
  }
  for (const auto& f : out.figures)
    if (!f.missing_on.empty() && gated(f.figure, o.gate))
      out.warnings.push_back(f.run + ": " + f.figure + " is missing on the " + f.missing_on +
                             " side and was not tested");
  return out;
}

}  // namespace embscale::report
