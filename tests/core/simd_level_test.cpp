#include "core/simd_level.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"

namespace embscale {
namespace {

constexpr SimdLevel kLevels[] = {SimdLevel::kBaseline, SimdLevel::kAvx2, SimdLevel::kAvx512};

TEST(SimdLevel, TheWidestLevelIsOneTheCpuRuns) {
  EXPECT_TRUE(cpu_runs(SimdLevel::kBaseline));
  const SimdLevel widest = simd_level_from(nullptr);
  EXPECT_TRUE(cpu_runs(widest));
  EXPECT_EQ(simd_level_from(""), widest);
  for (const SimdLevel level : kLevels) {
    if (cpu_runs(level)) {
      EXPECT_GE(static_cast<int>(widest), static_cast<int>(level)) << simd_level_name(level);
    }
  }
  EXPECT_TRUE(cpu_runs(simd_level()));
}

TEST(SimdLevel, NamesSelectLevelsTheCpuRuns) {
  for (const SimdLevel level : kLevels) {
    const std::string name(simd_level_name(level));
    if (cpu_runs(level)) {
      EXPECT_EQ(simd_level_from(name.c_str()), level) << name;
    } else {
      try {
        simd_level_from(name.c_str());
        ADD_FAILURE() << name << " accepted on a CPU that cannot run it";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("EMBSCALE_SIMD=" + name + ": this CPU cannot run"), std::string::npos)
            << e.what();
      }
    }
  }
}

TEST(SimdLevel, AnUnknownNameIsAnErrorListingTheChoices) {
  try {
    simd_level_from("sse9");
    FAIL() << "sse9 accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "EMBSCALE_SIMD=sse9: expected baseline, avx2 or avx512");
  }
}

}  // namespace
}  // namespace embscale
