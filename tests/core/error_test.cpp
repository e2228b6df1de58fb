#include "core/error.hpp"

#include <gtest/gtest.h>

namespace embscale {
namespace {

TEST(Expects, ThrowsErrorNamingConditionReasonAndPlace) {
  try {
    EMBSCALE_EXPECTS(1 + 1 == 3, "arithmetic is broken");
    FAIL() << "no throw";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("arithmetic is broken"), std::string::npos) << what;
    EXPECT_NE(what.find("1 + 1 == 3"), std::string::npos) << what;
    EXPECT_NE(what.find("error_test.cpp:"), std::string::npos) << what;
    EXPECT_EQ(e.exit_code(), kExitFailure);
  }
}

TEST(InputError, ExitsWithTheBadInputCode) {
  EXPECT_EQ(InputError("x").exit_code(), kExitBadInput);
  EXPECT_NO_THROW(EMBSCALE_EXPECTS(true, "never"));
}

}  // namespace
}  // namespace embscale
