// SGD: w -= lr g, no state; Global moves no untouched row.
#include <gtest/gtest.h>

#include "optimizer_test_support.hpp"

namespace embscale::embedding {
namespace {

using config::OptimizerType;
using testing::options;
using testing::TrainedRow;

TEST(SgdOptimizer, SubtractsTheScaledGradient) {
  TrainedRow r(options(OptimizerType::kSGD, UpdateType::kLocal, 0.5), {1.0f, -2.0f});
  EXPECT_EQ(r.optimizer->state_width(), 0);
  r.touch({0.2f, -0.4f}, 1);
  testing::expect_close(r.row, {0.9, -1.8}, "step 1");
  r.touch({1.0f, 1.0f}, 2);
  testing::expect_close(r.row, {0.4, -2.3}, "step 2");
}

TEST(SgdOptimizer, GlobalLeavesUntouchedRowsAndAtomicUpdateChangesNothing) {
  for (const bool atomic : {true, false}) {
    auto o = options(OptimizerType::kSGD, UpdateType::kGlobal, 0.5);
    o.atomic_update = atomic;
    TrainedRow r(o, {1.0f, -2.0f});
    EXPECT_FALSE(r.optimizer->changes_untouched_rows());
    r.touch({0.2f, -0.4f}, 1);
    r.skip(2);
    r.skip(3);
    testing::expect_close(r.row, {0.9, -1.8}, "after two untouched steps");
  }
}

}  // namespace
}  // namespace embscale::embedding
