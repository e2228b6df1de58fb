// Adam under LazyGlobal: HugeCTR's opt_adam_kernel_lazy re-stated in double precision; m and v
// catch up exactly on the decay of the missed steps; touched every step, the weight is Local's one
// step late; the last-touched step survives 2^24 and 2^32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "embedding/optimizers/step_digits.hpp"
#include "optimizer_test_support.hpp"

namespace embscale::embedding {
namespace {

using config::OptimizerType;
using testing::options;
using testing::TrainedRow;

constexpr double kLr = 0.1;
constexpr double kB1 = 0.9;
constexpr double kB2 = 0.999;
constexpr double kEps = 1e-7;

// HugeCTR's lazy kernel for one row, in double.
struct LazyReference {
  std::vector<double> w, m, v;
  std::int64_t last = 1;

  void touch(const std::vector<float>& g, std::int64_t t) {
    const auto s = static_cast<double>(t - last);
    const auto p = static_cast<double>(last);
    const double alpha =
        kLr / (1 - kB1) * std::sqrt(1 - std::pow(kB2, p)) / (1 - std::pow(kB1, p)) * (1 - std::pow(kB1, s));
    for (std::size_t d = 0; d < w.size(); ++d) {
      w[d] -= alpha * m[d] / (std::sqrt(v[d]) + kEps);
      m[d] = std::pow(kB1, s) * m[d] + (1 - kB1) * g[d];
      v[d] = std::pow(kB2, s) * v[d] + (1 - kB2) * g[d] * g[d];
    }
    last = t;
  }
};

TEST(LazyAdamOptimizer, StateIsMomentsAndTheLastStepStartingAtOne) {
  TrainedRow r(options(OptimizerType::kAdam, UpdateType::kLazyGlobal), {1.0f, 2.0f, 3.0f});
  ASSERT_EQ(r.optimizer->state_width(), 2 * 3 + optimizers::kStepDigits);
  EXPECT_EQ(r.state_part(0, 6), std::vector<float>(6, 0.0f));
  EXPECT_EQ(optimizers::load_step(r.state_part(6, optimizers::kStepDigits)), 1u);
  EXPECT_FALSE(r.optimizer->changes_untouched_rows());
  r.skip(1);  // lazy: nothing until the next touch
  EXPECT_EQ(r.row, (std::vector<float>{1.0f, 2.0f, 3.0f}));
}

TEST(LazyAdamOptimizer, FirstTouchSetsTheMomentsAndMovesNothing) {
  TrainedRow r(options(OptimizerType::kAdam, UpdateType::kLazyGlobal), {1.0f});
  r.touch({0.5f}, 7);
  EXPECT_EQ(r.row[0], 1.0f);
  testing::expect_close(r.state_part(0, 2), {0.05, 0.00025}, "m, v");
  EXPECT_EQ(optimizers::load_step(r.state_part(2, optimizers::kStepDigits)), 7u);
}

TEST(LazyAdamOptimizer, MatchesHugeCtrsLazyKernel) {
  constexpr std::size_t kDim = 3;
  TrainedRow r(options(OptimizerType::kAdam, UpdateType::kLazyGlobal, kLr), {0.5f, -0.5f, 0.1f});
  LazyReference ref{{0.5, -0.5, 0.1}, std::vector<double>(kDim, 0.0), std::vector<double>(kDim, 0.0)};
  for (const std::int64_t t : {1, 2, 5, 6, 13, 40}) {
    const auto g = testing::gradient(t, kDim);
    r.touch(g, t);
    ref.touch(g, t);
    testing::expect_close(r.row, ref.w, "weights");
    testing::expect_close(r.state_part(0, kDim), ref.m, "m");
    testing::expect_close(r.state_part(kDim, kDim), ref.v, "v");
  }
}

// The catch-up of m and v equals the decay Global applies step by step to an untouched row.
TEST(LazyAdamOptimizer, MomentsCatchUpAsGlobalDecaysThemStepByStep) {
  constexpr std::size_t kDim = 2;
  TrainedRow lazy(options(OptimizerType::kAdam, UpdateType::kLazyGlobal), {0.0f, 0.0f});
  TrainedRow global(options(OptimizerType::kAdam, UpdateType::kGlobal), {0.0f, 0.0f});
  const std::vector<std::int64_t> touches = {1, 3, 4, 9, 17};
  for (std::int64_t t = 1; t <= 17; ++t) {
    const bool touched = std::find(touches.begin(), touches.end(), t) != touches.end();
    const auto g = testing::gradient(t, kDim);
    if (touched) lazy.touch(g, t);
    touched ? global.touch(g, t) : global.skip(t);
  }
  const std::vector<float> global_moments = global.state_part(0, 2 * kDim);
  testing::expect_close(lazy.state_part(0, 2 * kDim), std::vector<double>(global_moments.begin(), global_moments.end()),
                        "m, v");
}

// With one missed step each time (s = 1) the catch-up is lr_p m_p / (sqrt(v_p) + eps): Local's
// move of step p, applied at step p + 1.
TEST(LazyAdamOptimizer, TouchedEveryStepIsLocalOneStepLate) {
  constexpr std::size_t kDim = 2;
  TrainedRow lazy(options(OptimizerType::kAdam, UpdateType::kLazyGlobal), {0.3f, -0.3f});
  TrainedRow local(options(OptimizerType::kAdam, UpdateType::kLocal), {0.3f, -0.3f});
  for (std::int64_t t = 1; t <= 20; ++t) {
    const auto g = testing::gradient(t, kDim);
    lazy.touch(g, t);
    testing::expect_close(lazy.row, std::vector<double>(local.row.begin(), local.row.end()), "weights");
    local.touch(g, t);
    testing::expect_close(lazy.state_part(0, 2 * kDim),
                          {local.state[0], local.state[1], local.state[2], local.state[3]}, "m, v");
  }
}

// Steps past float's exact integers (2^24) and past the stored digits' 2^32.
TEST(LazyAdamOptimizer, MissedStepsAreRightPastTwoToThe24And32) {
  for (const std::int64_t first : {(std::int64_t{1} << 24) - 2, (std::int64_t{1} << 32) - 2}) {
    TrainedRow r(options(OptimizerType::kAdam, UpdateType::kLazyGlobal, kLr), {1.0f});
    LazyReference ref{{1.0}, {0.0}, {0.0}};
    for (const std::int64_t t : {first, first + 1, first + 5}) {
      const auto g = testing::gradient(t, 1);
      r.touch(g, t);
      ref.touch(g, t);
    }
    testing::expect_close(r.row, ref.w, "weights");
    testing::expect_close(r.state_part(0, 2), {ref.m[0], ref.v[0]}, "m, v");
  }
}

}  // namespace
}  // namespace embscale::embedding
