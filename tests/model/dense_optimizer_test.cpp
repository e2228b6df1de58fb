// The dense part's optimizer (lib/model/dense_optimizer.hpp) against each rule written out here
// step by step in double, over both parameter buffers (replicated and local), three steps of random
// gradients with a fixed seed: SGD under its learning-rate schedule, MomentumSGD, Nesterov, Adam
// (bias-corrected) and AdaGrad (from initial_accu_value).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/dense_optimizer.hpp"

namespace embscale::model {
namespace {

using config::OptimizerType;

config::Optimizer settings(OptimizerType type) {
  config::Optimizer o;
  o.type = type;
  o.learning_rate = 0.1;
  o.momentum_factor = 0.9;
  o.beta1 = 0.8;
  o.beta2 = 0.95;
  o.epsilon = 1e-6;
  o.initial_accu_value = 0.2;
  o.warmup_steps = 2;  // SGD: step 1 at half the rate
  return o;
}

// One element's rule, from its own state, at the 1-based step.
struct Reference {
  config::Optimizer o;
  double first = 0, second = 0;
  bool started = false;
  void step(double& w, double g, std::int64_t t) {
    const double lr = o.learning_rate_at(t);
    switch (o.type) {
      case OptimizerType::kSGD: w -= lr * g; break;
      case OptimizerType::kMomentumSGD:
        first = o.momentum_factor * first - lr * g;
        w += first;
        break;
      case OptimizerType::kNesterov: {
        const double old = first;
        first = o.momentum_factor * old - lr * g;
        w += -o.momentum_factor * old + (1 + o.momentum_factor) * first;
        break;
      }
      case OptimizerType::kAdam: {
        first = o.beta1 * first + (1 - o.beta1) * g;
        second = o.beta2 * second + (1 - o.beta2) * g * g;
        const double m_hat_scale = 1 / (1 - std::pow(o.beta1, static_cast<double>(t)));
        const double v_hat_scale = 1 / (1 - std::pow(o.beta2, static_cast<double>(t)));
        // lr * m_hat / (sqrt(v_hat) + eps'), with eps' = eps / sqrt(v_hat_scale): the form
        // lr_t m / (sqrt(v) + eps) HugeCTR and the sparse optimizers use.
        w -= lr * first * m_hat_scale / (std::sqrt(second * v_hat_scale) + o.epsilon * std::sqrt(v_hat_scale));
        break;
      }
      case OptimizerType::kAdaGrad:
      case OptimizerType::kRowWiseAdaGrad:
        if (!started) second = o.initial_accu_value;
        second += g * g;
        w -= lr * g / (std::sqrt(second) + o.epsilon);
        break;
    }
    started = true;
  }
};

TEST(DenseOptimizer, EveryRuleAgainstItsFormulaOnBothBuffers) {
  for (const auto type : {OptimizerType::kSGD, OptimizerType::kMomentumSGD, OptimizerType::kNesterov,
                          OptimizerType::kAdam, OptimizerType::kAdaGrad}) {
    ParameterStore<double> store;
    store.declare(5, ParameterSharing::kReplicated, false);
    store.declare(3, ParameterSharing::kLocal, false);
    store.allocate();
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> expected;
    for (const auto sharing : {ParameterSharing::kReplicated, ParameterSharing::kLocal})
      for (double& w : store.values(sharing)) expected.push_back(w = u(rng));
    std::vector<Reference> refs(expected.size(), Reference{settings(type)});
    DenseOptimizer<double> optimizer(settings(type));
    for (std::int64_t t = 1; t <= 3; ++t) {
      std::size_t k = 0;
      for (const auto sharing : {ParameterSharing::kReplicated, ParameterSharing::kLocal})
        for (double& g : store.grads(sharing)) {
          g = u(rng);
          refs[k].step(expected[k], g, t);
          ++k;
        }
      optimizer.apply(store, t);
    }
    std::size_t k = 0;
    for (const auto sharing : {ParameterSharing::kReplicated, ParameterSharing::kLocal})
      for (const double w : store.values(sharing)) EXPECT_NEAR(w, expected[k++], 1e-12) << config::to_string(type);
  }
}

}  // namespace
}  // namespace embscale::model
