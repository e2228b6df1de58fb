// LazyGlobal's last-touched step: exact in float, fp16 and bf16 storage, and the missed steps are
// right across 2^24 and 2^32.
#include "embedding/optimizers/step_digits.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "core/half_float.hpp"

namespace embscale::embedding::optimizers {
namespace {

TEST(StepDigits, SurviveFloat16AndBFloat16Storage) {
  for (const std::int64_t step : {std::int64_t{1}, std::int64_t{255}, std::int64_t{256}, std::int64_t{65537},
                                  (std::int64_t{1} << 24) + 1, (std::int64_t{1} << 32) - 1}) {
    std::vector<float> digits(kStepDigits);
    store_step(step, digits);
    std::vector<float> as_bf16(kStepDigits);
    std::vector<float> as_fp16(kStepDigits);
    for (int i = 0; i < kStepDigits; ++i) {
      as_bf16[i] = to_float(to_bfloat16(digits[i]));
      as_fp16[i] = to_float(to_half(digits[i]));
    }
    const auto expected = static_cast<std::uint32_t>(step);
    EXPECT_EQ(load_step(digits), expected) << step;
    EXPECT_EQ(load_step(as_bf16), expected) << step;
    EXPECT_EQ(load_step(as_fp16), expected) << step;
  }
}

TEST(StepDigits, StepsSinceCountAcrossTheWrapOf2To32) {
  std::vector<float> digits(kStepDigits);
  store_step((std::int64_t{1} << 32) - 3, digits);
  EXPECT_EQ(steps_since(digits, (std::int64_t{1} << 32) - 3), 0);
  EXPECT_EQ(steps_since(digits, (std::int64_t{1} << 32) + 4), 7);
  store_step(5, digits);
  EXPECT_EQ(steps_since(digits, 5 + (std::int64_t{1} << 24)), std::int64_t{1} << 24);
}

}  // namespace
}  // namespace embscale::embedding::optimizers
