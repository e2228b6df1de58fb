#include "report/run_pairing.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace embscale::report {
namespace {

ReportData::Run run_with(const std::string& id, std::vector<SummaryField> parameters) {
  ReportData::Run run;
  run.id = id;
  run.parameters = std::move(parameters);
  return run;
}

ReportData report_of(std::vector<ReportData::Run> runs) {
  ReportData d;
  d.runs = std::move(runs);
  return d;
}

std::string refusal(const ReportData& base, const ReportData& next, const std::vector<std::string>& ignored) {
  try {
    pair_runs(base, next, ignored);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PairRuns, RepetitionsStayTogetherAndLabelsAreSortedByName) {
  const auto base = report_of({run_with("a0", {{"ranks", std::int64_t{2}}, {"alpha", 1.05}}),
                               run_with("a1", {{"ranks", std::int64_t{2}}, {"alpha", 1.05}}),
                               run_with("x", {{"ranks", std::int64_t{8}}, {"alpha", 1.05}})});
  const auto next = report_of({run_with("b0", {{"alpha", 1.05}, {"ranks", std::int64_t{2}}}),
                               run_with("y", {{"ranks", std::int64_t{2}}, {"alpha", 0.9}})});
  const auto p = pair_runs(base, next, {});
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].label, "alpha=1.05 ranks=2");
  EXPECT_EQ(p.pairs[0].base.size(), 2u);
  EXPECT_EQ(p.pairs[0].next.size(), 1u);
  EXPECT_EQ(p.unpaired_base, 1u);
  EXPECT_EQ(p.unpaired_next, 1u);
}

TEST(PairRuns, IgnoredParametersShowBothValues) {
  const auto base = report_of({run_with("a", {{"ranks", std::int64_t{2}}, {"alpha", 1.05}})});
  const auto next = report_of({run_with("b", {{"ranks", std::int64_t{4}}, {"alpha", 1.1}})});
  const auto p = pair_runs(base, next, {"ranks", "alpha"});
  ASSERT_EQ(p.pairs.size(), 1u);
  EXPECT_EQ(p.pairs[0].label, "alpha=1.05->1.1 ranks=2->4");
  // Ignored and equal: shown once.
  EXPECT_EQ(
      pair_runs(base, report_of({run_with("b", {{"ranks", std::int64_t{4}}, {"alpha", 1.05}})}), {"ranks", "alpha"})
          .pairs[0]
          .label,
      "alpha=1.05 ranks=2->4");
}

TEST(PairRuns, TheRefusalNamesEachDifferingParameterWithBothValues) {
  const auto base =
      report_of({run_with("a", {{"ranks", std::int64_t{2}}, {"alpha", 1.05}, {"scheme", std::string("x")}})});
  const auto next =
      report_of({run_with("b", {{"ranks", std::int64_t{4}}, {"alpha", 1.1}, {"scheme", std::string("x")}})});
  const auto what = refusal(base, next, {});
  EXPECT_NE(what.find("alpha (base 1.05, new 1.1);"), std::string::npos) << what;
  EXPECT_NE(what.find("ranks (base 2, new 4);"), std::string::npos) << what;
  EXPECT_EQ(what.find("scheme ("), std::string::npos) << what;  // equal: not named
  EXPECT_NE(what.find("--ignore alpha,ranks"), std::string::npos) << what;
  // A parameter only one side has.
  const auto extra = refusal(
      base,
      report_of({run_with(
          "b", {{"ranks", std::int64_t{2}}, {"alpha", 1.05}, {"scheme", std::string("x")}, {"dim", std::int64_t{8}}})}),
      {});
  EXPECT_NE(extra.find("dim (base absent, new 8)"), std::string::npos) << extra;
  EXPECT_NE(refusal(base, report_of({}), {}).find("new has no runs"), std::string::npos);
}

TEST(PairRuns, AnUnknownIgnoredNameOrAnAmbiguousSideIsRefused) {
  const auto base =
      report_of({run_with("a", {{"ranks", std::int64_t{2}}}), run_with("b", {{"ranks", std::int64_t{4}}})});
  const auto next = report_of({run_with("c", {{"ranks", std::int64_t{2}}})});
  EXPECT_NE(refusal(base, next, {"rank"}).find("--ignore rank: no run of either report has a parameter of that name"),
            std::string::npos);
  const auto ambiguous = refusal(base, next, {"ranks"});
  EXPECT_NE(
      ambiguous.find("the base report holds runs that differ only in ignored parameters (ranks=2 against ranks=4"),
      std::string::npos)
      << ambiguous;
}

}  // namespace
}  // namespace embscale::report
