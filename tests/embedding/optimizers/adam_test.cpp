// Adam (Local and Global) against hand-computed steps and double-precision re-statements of
// HugeCTR's kernels, including its two-kernel Global form.
#include <gtest/gtest.h>

#include <cmath>

#include "optimizer_test_support.hpp"

namespace embscale::embedding {
namespace {

using config::OptimizerType;
using testing::options;
using testing::TrainedRow;

// lr = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-7 (HugeCTR's defaults but lr), w = 1, g = 0.5, -0.25,
// then an untouched step. Values computed once in double precision from
//   m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2, w -= lr sqrt(1 - b2^t) / (1 - b1^t) m / (sqrt(v) + eps)
// (step 1 moves w by lr sign(g), less the epsilon's share).
TEST(AdamOptimizer, HandComputedStepsLocalAndGlobal) {
  TrainedRow global(options(OptimizerType::kAdam, UpdateType::kGlobal), {1.0f});
  TrainedRow local(options(OptimizerType::kAdam, UpdateType::kLocal), {1.0f});
  for (auto* r : {&global, &local}) {
    EXPECT_EQ(r->optimizer->state_width(), 2);
    r->touch({0.5f}, 1);
    testing::expect_close(r->row, {0.9000006324515321}, "step 1");
    testing::expect_close(r->state, {0.05, 0.00025}, "m, v after step 1");
    r->touch({-0.25f}, 2);
    testing::expect_close(r->row, {0.8733670792079219}, "step 2");
    testing::expect_close(r->state, {0.02, 0.00031225}, "m, v after step 2");
    r->skip(3);
  }
  EXPECT_TRUE(global.optimizer->changes_untouched_rows());
  testing::expect_close(global.row, {0.8527792654165677}, "Global, untouched step 3");
  testing::expect_close(global.state, {0.018, 0.00031193775}, "Global m, v after step 3");
  EXPECT_FALSE(local.optimizer->changes_untouched_rows());
  testing::expect_close(local.row, {0.8733670792079219}, "Local, untouched step 3");
  testing::expect_close(local.state, {0.02, 0.00031225}, "Local m, v after step 3");
}

// HugeCTR's Global Adam as written there: touched rows m += (1 - b1) g / b1, v += (1 - b2) g^2 / b2;
// then every row m *= b1, v *= b2, w -= lr_t m / (sqrt(v) + eps).
TEST(AdamOptimizer, GlobalMatchesHugeCtrsTwoKernelForm) {
  constexpr std::size_t kDim = 4;
  auto o = options(OptimizerType::kAdam, UpdateType::kGlobal, 0.01);
  o.beta1 = 0.8;
  o.beta2 = 0.99;
  o.epsilon = 1e-6;
  TrainedRow r(o, {0.1f, 0.2f, -0.3f, 0.4f});
  std::vector<double> w = {0.1, 0.2, -0.3, 0.4};
  std::vector<double> m(kDim, 0.0);
  std::vector<double> v(kDim, 0.0);
  for (std::int64_t t = 1; t <= 12; ++t) {
    const bool touched = t % 4 == 1 || t % 4 == 2;
    const auto g = testing::gradient(t, kDim);
    touched ? r.touch(g, t) : r.skip(t);
    const double lr_t = 0.01 * std::sqrt(1 - std::pow(0.99, t)) / (1 - std::pow(0.8, t));
    for (std::size_t d = 0; d < kDim; ++d) {
      if (touched) {
        m[d] += (1 - 0.8) * g[d] / 0.8;
        v[d] += (1 - 0.99) * g[d] * g[d] / 0.99;
      }
      m[d] *= 0.8;
      v[d] *= 0.99;
      w[d] -= lr_t * m[d] / (std::sqrt(v[d]) + 1e-6);
    }
  }
  testing::expect_close(r.row, w, "weights");
  testing::expect_close(r.state_part(0, kDim), m, "m");
  testing::expect_close(r.state_part(kDim, kDim), v, "v");
}

// The bias-corrected step size is cached per thread: optimizers with other learning rates, used
// in turn at the same step, must each get their own.
TEST(AdamOptimizer, InterleavedOptimizersKeepTheirOwnStepSize) {
  TrainedRow slow(options(OptimizerType::kAdam, UpdateType::kLocal, 0.01), {0.0f});
  TrainedRow fast(options(OptimizerType::kAdam, UpdateType::kLocal, 0.1), {0.0f});
  for (std::int64_t t = 1; t <= 3; ++t) {
    slow.touch({1.0f}, t);
    fast.touch({1.0f}, t);
  }
  // A constant gradient: m / sqrt(v) = (1 - b1^t) / sqrt(1 - b2^t), so each step moves w by lr
  // (less epsilon's share): 3 lr after 3 steps.
  EXPECT_NEAR(slow.row[0], -0.03, 1e-5);
  EXPECT_NEAR(fast.row[0], -0.3, 1e-5);
}

}  // namespace
}  // namespace embscale::embedding
