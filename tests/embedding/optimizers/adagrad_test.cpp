// AdaGrad (HugeCTR) and row-wise AdaGrad (FBGEMM's EXACT_ROWWISE_ADAGRAD) against hand-computed
// steps; the accumulators start at initial_accu_value; Global leaves untouched rows.
#include <gtest/gtest.h>

#include "optimizer_test_support.hpp"

namespace embscale::embedding {
namespace {

using config::OptimizerType;
using testing::options;
using testing::TrainedRow;

// lr = 0.1, eps = 1e-7, w = 1, g = 2: s = 4, w = 1 - 0.2 / (2 + 1e-7); g = 1: s = 5,
// w -= 0.1 / (sqrt(5) + 1e-7).
TEST(AdaGradOptimizer, HandComputedSteps) {
  TrainedRow r(options(OptimizerType::kAdaGrad), {1.0f});
  EXPECT_EQ(r.optimizer->state_width(), 1);
  r.touch({2.0f}, 1);
  testing::expect_close(r.row, {0.9000000049999998}, "step 1");
  testing::expect_close(r.state, {4.0}, "accumulator after step 1");
  r.touch({1.0f}, 2);
  testing::expect_close(r.row, {0.8552786474500039}, "step 2");
  testing::expect_close(r.state, {5.0}, "accumulator after step 2");
}

// initial_accu_value = 1: s = 1 + 4 = 5, w = 1 - 0.2 / (sqrt(5) + 1e-7).
TEST(AdaGradOptimizer, AccumulatorsStartAtInitialAccuValue) {
  auto o = options(OptimizerType::kAdaGrad);
  o.initial_accu_value = 1.0;
  TrainedRow r(o, {1.0f, 1.0f, 1.0f});
  EXPECT_EQ(r.state, std::vector<float>(3, 1.0f));
  r.touch({2.0f, 0.0f, 0.0f}, 1);
  testing::expect_close(r.row, {0.9105572849000082, 1.0, 1.0}, "step 1");
}

TEST(AdaGradOptimizer, GlobalLeavesUntouchedRows) {
  TrainedRow r(options(OptimizerType::kAdaGrad, UpdateType::kGlobal), {1.0f});
  EXPECT_FALSE(r.optimizer->changes_untouched_rows());
  r.touch({2.0f}, 1);
  r.skip(2);
  testing::expect_close(r.row, {0.9000000049999998}, "after an untouched step");
  testing::expect_close(r.state, {4.0}, "accumulator after an untouched step");
}

// One accumulator per row: g = (3, 4): s = (9 + 16) / 2 = 12.5, w -= 0.1 / (sqrt(12.5) + 1e-8) g;
// g = (1, 0): s = 13, w -= 0.1 / (sqrt(13) + 1e-8) g.
TEST(RowWiseAdaGradOptimizer, HandComputedStepsWithOneAccumulatorPerRow) {
  TrainedRow r(options(OptimizerType::kRowWiseAdaGrad), {1.0f, -1.0f});
  EXPECT_EQ(r.optimizer->state_width(), 1);
  r.touch({3.0f, 4.0f}, 1);
  testing::expect_close(r.row, {0.9151471864976143, -1.1131370846698476}, "step 1");
  testing::expect_close(r.state, {12.5}, "accumulator after step 1");
  r.touch({1.0f, 0.0f}, 2);
  testing::expect_close(r.row, {0.8874121767632759, -1.1131370846698476}, "step 2");
  testing::expect_close(r.state, {13.0}, "accumulator after step 2");
}

TEST(RowWiseAdaGradOptimizer, AccumulatorStartsAtInitialAccuValueAndGlobalLeavesUntouchedRows) {
  auto o = options(OptimizerType::kRowWiseAdaGrad, UpdateType::kGlobal);
  o.initial_accu_value = 0.5;
  TrainedRow r(o, {1.0f, -1.0f});
  EXPECT_EQ(r.state, std::vector<float>{0.5f});
  r.touch({3.0f, 4.0f}, 1);
  testing::expect_close(r.state, {13.0}, "accumulator after step 1");
  const auto after_touch = r.row;
  r.skip(2);
  EXPECT_EQ(r.row, after_touch);
  testing::expect_close(r.state, {13.0}, "accumulator after an untouched step");
}

}  // namespace
}  // namespace embscale::embedding
