// report_kind and the refusals built on it: the default for reports written before the
// attribute, and messages that name every file with its kind.
#include "report/report_kind.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace embscale::report {
namespace {

template <class F> std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

TEST(ReportKind, IsRunWithoutTheAttributeAndTheTextWithIt) {
  EXPECT_EQ(report_kind({{"schema_version", std::int64_t{1}}}), "run");
  EXPECT_EQ(report_kind({{"report_kind", std::string("collectives")}}), "collectives");
  EXPECT_EQ(report_kind({{"report_kind", std::string("from a newer embscale")}}), "from a newer embscale");
  EXPECT_EQ(input_error_of([] {
              report_kind({{"report_kind", 1.5}});
            }),
            "/: expected the attribute report_kind to be text (\"run\", \"collectives\")");
}

TEST(ReportKind, OneKindPassesAndMixedKindsNameEveryFile) {
  EXPECT_EQ(require_one_kind({}, "merge"), "run");
  EXPECT_EQ(require_one_kind({{"a.h5", "collectives"}, {"b.h5", "collectives"}}, "merge"), "collectives");
  EXPECT_EQ(input_error_of([] {
              require_one_kind({{"a.h5", "run"}, {"b.h5", "collectives"}, {"c.h5", "run"}}, "merge");
            }),
            "cannot merge reports of different kinds (root attribute report_kind): a.h5 is a run report, b.h5 a "
            "collectives report, c.h5 a run report");
}

TEST(ReportKind, ARequiredKindRefusesTheOthersByName) {
  EXPECT_NO_THROW(require_kind({"p0.r0.h5", "run"}, kRunReport, "a sweep"));
  EXPECT_EQ(input_error_of([] {
              require_kind({"p0.r0.h5", "collectives"}, kRunReport, "a sweep");
            }),
            "p0.r0.h5: a collectives report (root attribute report_kind); a sweep reads run reports only");
}

}  // namespace
}  // namespace embscale::report
