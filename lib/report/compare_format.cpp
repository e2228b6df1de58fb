// embscale compare's output: the text table a person reads and the JSON a script reads.
#include <algorithm>
#include <cstdio>

#include "report/compare.hpp"
#include "report/figure_units.hpp"

namespace embscale::report {
namespace {

const char* verdict_of(const FigureComparison& f) {
  if (f.regression) return "REGRESSION";
  if (f.slower) return "slower (not gated)";
  if (f.improvement) return "improved";
  if (f.below_floor) return "no significant change (below the floor)";
  return "no significant change";
}

std::string p_text(double p) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", p);
  return text;
}

std::string min_change_text(const CompareOptions& o) {
  if (o.min_change) return p_text(100.0 * *o.min_change) + "%";
  return p_text(100.0 * kMinChangeRepetitions) + "% with repetitions, " + p_text(100.0 * kMinChangeSingleRuns) +
         "% with single runs (--min-change)";
}

// The change column: relative, or in the figure's own units (AUC points) for quality figures.
std::string change_text(const FigureComparison& f) {
  char text[32];
  if (f.absolute) std::snprintf(text, sizeof text, "%+9.4f", f.next - f.base);
  else std::snprintf(text, sizeof text, "%+8.1f%%", 100.0 * f.relative_change);
  return text;
}

}  // namespace

std::string format_comparison(const Comparison& c, const CompareOptions& o) {
  std::string text;
  char line[512];
  std::string current_run;
  std::vector<std::string> missing;
  for (const auto& f : c.figures) {
    if (!f.missing_on.empty()) {
      missing.push_back(f.figure + " (" + f.run + "): only in the " + (f.missing_on == "base" ? "new" : "base") +
                        " report");
      continue;
    }
    if (f.run != current_run) {
      text += (current_run.empty() ? "" : "\n") + std::string("run: ") + f.run + "\n";
      text += "samples: " + f.sampling + " after the warm-up\n";
      std::snprintf(line, sizeof line, "  %-30s %16s %16s %9s %9s %9s  %s\n", "figure", "base", "new", "change",
                    "p(change)", "p(worse)", "verdict");
      text += line;
      current_run = f.run;
    }
    // p(worse): Holm-adjusted where gated, else the test alone, in brackets.
    const std::string worse = f.gated ? p_text(f.p_holm) : "[" + p_text(f.p_worse) + "]";
    std::snprintf(line, sizeof line, "  %-30s %16s %16s %9s %9s %9s  %s\n", (f.figure + (f.gated ? " *" : "")).c_str(),
                  format_figure_value(f.figure, f.base).c_str(), format_figure_value(f.figure, f.next).c_str(),
                  change_text(f).c_str(), p_text(f.p_value).c_str(), worse.c_str(), verdict_of(f));
    text += line;
    if (f.absolute) text += "    (" + f.sampling + ")\n";
  }
  text += "\n* gated (--gate): " + describe(o.gate) + "; Holm's correction over " + std::to_string(c.gated_tests) +
          " test(s) (a pair's step time and throughput are one) at alpha " + p_text(o.alpha) +
          "; a regression also needs a change above " + min_change_text(o) +
          " (a phase: above that share of the step time; eval_auc: a drop of more than " + p_text(o.min_auc_change) +
          " AUC points, --min-auc-change; hit_rate: more than " + p_text(o.min_hit_rate_change) +
          " points of hit rate, --min-hit-rate-change)\n"
          "p(change): one-sided Mann-Whitney U test in the direction the median moved; p(worse): the one-sided test "
          "that the figure got worse, Holm-adjusted for the gated (*) figures, and for the others [in brackets] "
          "alone, not corrected for the number of figures (their \"slower\" and \"improved\" are tests alone); "
          "\"no significant change\": neither a regression nor an improvement was shown, which is not proof "
          "that nothing changed\n";
  for (const auto& m : missing) text += "not compared: " + m + "\n";
  for (const auto& w : c.warnings) text += "warning: " + w + "\n";
  const bool single_runs = std::any_of(c.figures.begin(), c.figures.end(), [](const FigureComparison& f) {
    return f.gated && f.sampling.rfind("block means", 0) == 0;
  });
  if (single_runs)
    text +=
        "note: single runs: the tests see the noise inside each run, not the shifts between runs, which on a "
        "shared machine can exceed --min-change (README \"Comparing runs\" has measured rates); to gate CI, "
        "compare 5 or more repetitions a side\n";
  const bool single_quality = std::any_of(c.figures.begin(), c.figures.end(), [](const FigureComparison& f) {
    return f.gated && f.absolute && f.missing_on.empty() && f.sampling.find("z-test") != std::string::npos;
  });
  if (single_quality)
    text +=
        "note: eval_auc of one run a side: the test sees the held-out samples' noise, not the training's (the same "
        "config and seed give the same AUC; another seed moved it past the gate in 12 of 100 pairs, README "
        "\"Comparing runs\"); to gate on quality, compare 5 or more runs a side of other seeds\n";
  if (c.unpaired_base + c.unpaired_next > 0)
    text += "not compared: " + std::to_string(c.unpaired_base) + " base and " + std::to_string(c.unpaired_next) +
            " new run(s) without a partner of the same parameters (--ignore pairs them)\n";
  if (c.step_time_ratios > 0) {
    std::snprintf(line, sizeof line,
                  "step time new/base (median), geometric mean over %zu paired point(s) (a point: the runs of one set "
                  "of parameters; %zu base and %zu new run(s) in the pairs): %.4f\n",
                  c.step_time_ratios, c.paired_base_runs, c.paired_next_runs, c.step_time_ratio_geomean);
    text += line;
  }
  text += c.any_regression ? "verdict: REGRESSION\n" : "verdict: no significant regression\n";
  return text;
}

nlohmann::json comparison_to_json(const Comparison& c, const CompareOptions& o) {
  nlohmann::json figures = nlohmann::json::array();
  for (const auto& f : c.figures)
    figures.push_back({{"run", f.run},
                       {"figure", f.figure},
                       {"higher_is_better", f.higher_is_better},
                       {"gated", f.gated},
                       {"base", f.base},
                       {"new", f.next},
                       {"relative_change", f.relative_change},
                       {"p_value", f.p_value},
                       {"p_worse", f.p_worse},
                       {"p_holm", f.gated ? nlohmann::json(f.p_holm) : nlohmann::json(nullptr)},
                       {"below_floor", f.below_floor},
                       {"sampling", f.sampling},
                       {"missing_on", f.missing_on},
                       {"min_change", f.min_change},
                       {"min_change_is_absolute", f.absolute},
                       {"regression", f.regression},
                       {"slower_not_gated", f.slower},
                       {"improvement", f.improvement}});
  return {{"alpha", o.alpha},
          {"min_change", min_change_text(o)},
          {"min_auc_change", o.min_auc_change},
          {"min_hit_rate_change", o.min_hit_rate_change},
          {"gate", describe(o.gate)},
          {"ignored_parameters", o.ignored_parameters},
          {"matched_runs", c.matched_runs},
          {"unpaired_base_runs", c.unpaired_base},
          {"unpaired_new_runs", c.unpaired_next},
          {"gated_tests", c.gated_tests},
          {"step_time_ratio_geomean", c.step_time_ratio_geomean},
          {"warnings", c.warnings},
          {"regression", c.any_regression},
          {"figures", figures}};
}

}  // namespace embscale::report
