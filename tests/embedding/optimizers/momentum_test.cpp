// MomentumSGD and Nesterov against hand-computed steps and double-precision re-statements of
// HugeCTR's kernels, including its two-kernel Global form.
#include <gtest/gtest.h>

#include "optimizer_test_support.hpp"

namespace embscale::embedding {
namespace {

using config::OptimizerType;
using testing::options;
using testing::TrainedRow;

config::Optimizer momentum_options(OptimizerType type, UpdateType update, double factor) {
  auto o = options(type, update, 0.1);
  o.momentum_factor = factor;
  return o;
}

// f = 0.9, lr = 0.1, w = 1, g = 1, 1: a = -0.1, w = 0.9; a = -0.19, w = 0.71. An untouched step
// under Global: a = -0.171, w = 0.539. Under Local it changes nothing.
TEST(MomentumSgdOptimizer, HandComputedStepsLocalAndGlobal) {
  TrainedRow global(momentum_options(OptimizerType::kMomentumSGD, UpdateType::kGlobal, 0.9), {1.0f});
  TrainedRow local(momentum_options(OptimizerType::kMomentumSGD, UpdateType::kLocal, 0.9), {1.0f});
  for (auto* r : {&global, &local}) {
    EXPECT_EQ(r->optimizer->state_width(), 1);
    r->touch({1.0f}, 1);
    testing::expect_close(r->row, {0.9}, "step 1");
    r->touch({1.0f}, 2);
    testing::expect_close(r->row, {0.71}, "step 2");
    testing::expect_close(r->state, {-0.19}, "momentum after step 2");
    r->skip(3);
  }
  EXPECT_TRUE(global.optimizer->changes_untouched_rows());
  testing::expect_close(global.row, {0.539}, "Global, untouched step 3");
  testing::expect_close(global.state, {-0.171}, "Global momentum after step 3");
  EXPECT_FALSE(local.optimizer->changes_untouched_rows());
  testing::expect_close(local.row, {0.71}, "Local, untouched step 3");
  testing::expect_close(local.state, {-0.19}, "Local momentum after step 3");
}

// HugeCTR's Global MomentumSGD as written there: touched rows a -= lr g / f, then every row
// a *= f, w += a. Touched on odd steps, untouched on even ones.
TEST(MomentumSgdOptimizer, GlobalMatchesHugeCtrsTwoKernelForm) {
  constexpr std::size_t kDim = 3;
  constexpr double kFactor = 0.8;
  constexpr double kLr = 0.1;
  TrainedRow r(momentum_options(OptimizerType::kMomentumSGD, UpdateType::kGlobal, kFactor), {0.5f, -0.5f, 0.25f});
  std::vector<double> w = {0.5, -0.5, 0.25};
  std::vector<double> a(kDim, 0.0);
  for (std::int64_t t = 1; t <= 9; ++t) {
    const bool touched = t % 2 == 1;
    const auto g = testing::gradient(t, kDim);
    touched ? r.touch(g, t) : r.skip(t);
    for (std::size_t d = 0; d < kDim; ++d) {
      if (touched) a[d] -= kLr * g[d] / kFactor;
      a[d] *= kFactor;
      w[d] += a[d];
    }
  }
  testing::expect_close(r.row, w, "weights");
  testing::expect_close(r.state, a, "momentum");
}

// mu = 0.9, lr = 0.1, w = 1, g = 1, 1: a = -0.1, w = 1 + 1.9 (-0.1) = 0.81; a = -0.19,
// w = 0.81 + 0.09 - 0.361 = 0.539. An untouched step under Global: a = -0.171,
// w = 0.539 + mu^2 (-0.19) = 0.3851.
TEST(NesterovOptimizer, HandComputedStepsLocalAndGlobal) {
  TrainedRow global(momentum_options(OptimizerType::kNesterov, UpdateType::kGlobal, 0.9), {1.0f});
  TrainedRow local(momentum_options(OptimizerType::kNesterov, UpdateType::kLocal, 0.9), {1.0f});
  for (auto* r : {&global, &local}) {
    EXPECT_EQ(r->optimizer->state_width(), 1);
    r->touch({1.0f}, 1);
    testing::expect_close(r->row, {0.81}, "step 1");
    r->touch({1.0f}, 2);
    testing::expect_close(r->row, {0.539}, "step 2");
    r->skip(3);
  }
  testing::expect_close(global.row, {0.3851}, "Global, untouched step 3");
  testing::expect_close(global.state, {-0.171}, "Global momentum after step 3");
  testing::expect_close(local.row, {0.539}, "Local, untouched step 3");
}

// HugeCTR's Global Nesterov as written there: every row a *= mu, w += mu a; then touched rows
// a -= lr g, w -= (1 + mu) lr g.
TEST(NesterovOptimizer, GlobalMatchesHugeCtrsTwoKernelForm) {
  constexpr std::size_t kDim = 2;
  constexpr double kMu = 0.7;
  constexpr double kLr = 0.1;
  TrainedRow r(momentum_options(OptimizerType::kNesterov, UpdateType::kGlobal, kMu), {0.3f, -0.2f});
  std::vector<double> w = {0.3, -0.2};
  std::vector<double> a(kDim, 0.0);
  for (std::int64_t t = 1; t <= 10; ++t) {
    const bool touched = t % 3 != 0;
    const auto g = testing::gradient(t, kDim);
    touched ? r.touch(g, t) : r.skip(t);
    for (std::size_t d = 0; d < kDim; ++d) {
      a[d] *= kMu;
      w[d] += kMu * a[d];
      if (touched) {
        a[d] -= kLr * g[d];
        w[d] -= (1 + kMu) * kLr * g[d];
      }
    }
  }
  testing::expect_close(r.row, w, "weights");
  testing::expect_close(r.state, a, "momentum");
}

TEST(MomentumOptimizers, ZeroFactorIsPlainSgd) {
  for (const auto type : {OptimizerType::kMomentumSGD, OptimizerType::kNesterov}) {
    TrainedRow r(momentum_options(type, UpdateType::kGlobal, 0.0), {1.0f, 2.0f});
    r.touch({1.0f, -1.0f}, 1);
    r.skip(2);
    r.touch({0.5f, 0.5f}, 3);
    testing::expect_close(r.row, {0.85, 2.05}, config::to_string(type).c_str());
  }
}

}  // namespace
}  // namespace embscale::embedding
