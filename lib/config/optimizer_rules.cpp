#include "config/optimizer_rules.hpp"

#include <limits>

#include "core/error.hpp"

namespace embscale::config {
namespace {

// Every type reads a learning rate: required, positive.
const HyperParameter kLearningRate{
    .key = "learning_rate", .number = &Optimizer::learning_rate, .range = NumberRange::above(0.0), .required = true};
// Momentum and Adam's betas: a factor of 1 never decays (and divides by zero in Adam's bias
// correction 1 - beta1^t).
const NumberRange kDecay = NumberRange::from_up_to(0.0, 1.0);
// Epsilon keeps w -= lr m / (sqrt(v) + eps) finite when a row's accumulator is 0 (a row whose
// every gradient so far was 0, e.g. an untouched row under the Global update).
const NumberRange kEpsilon = NumberRange::above(0.0);
const NumberRange kAccumulator = NumberRange::between(0.0, std::numeric_limits<double>::infinity());
// FBGEMM's default eps of EXACT_ROWWISE_ADAGRAD (HugeCTR's AdaGrad default is 1e-7).
constexpr double kRowWiseAdaGradEpsilon = 1e-8;

HyperParameter decay(const char* key, double Optimizer::*field) {
  return {.key = key, .number = field, .range = kDecay};
}

std::vector<OptimizerRules> build_rules() {
  const HyperParameter atomic_update{.key = "atomic_update", .flag = &Optimizer::atomic_update};
  const HyperParameter momentum = decay("momentum_factor", &Optimizer::momentum_factor);
  const HyperParameter epsilon{.key = "epsilon", .number = &Optimizer::epsilon, .range = kEpsilon};
  const HyperParameter accumulator{
      .key = "initial_accu_value", .number = &Optimizer::initial_accu_value, .range = kAccumulator};
  // HugeCTR's schedule (its constructor's checks: warmup and decay steps at least 1, a power of
  // at least 1, a non-negative end rate; warmup 0 is taken as 1, no warm-up).
  const auto count = [](const char* key, double Optimizer::*field, double least) {
    return HyperParameter{.key = key, .number = field, .range = NumberRange::between(least, 1e15), .integer = true};
  };
  const HyperParameter power{
      .key = "decay_power", .number = &Optimizer::decay_power, .range = NumberRange::between(1.0, 1e6)};
  const HyperParameter end_lr{.key = "end_lr", .number = &Optimizer::end_lr, .range = kAccumulator};
  HyperParameter rowwise_epsilon = epsilon;
  rowwise_epsilon.default_value = kRowWiseAdaGradEpsilon;
  return {
      {"SGD",
       OptimizerType::kSGD,
       "sgd_hparam",
       {kLearningRate, atomic_update, count("warmup_steps", &Optimizer::warmup_steps, 0.0),
        count("decay_start", &Optimizer::decay_start, 0.0), count("decay_steps", &Optimizer::decay_steps, 1.0), power,
        end_lr}},
      {"MomentumSGD", OptimizerType::kMomentumSGD, "momentum_sgd_hparam", {kLearningRate, momentum}},
      {"Nesterov", OptimizerType::kNesterov, "nesterov_hparam", {kLearningRate, momentum}},
      {"Adam",
       OptimizerType::kAdam,
       "adam_hparam",
       {kLearningRate, decay("beta1", &Optimizer::beta1), decay("beta2", &Optimizer::beta2), epsilon},
       /*lazy_global=*/true},
      {"AdaGrad", OptimizerType::kAdaGrad, "adagrad_hparam", {kLearningRate, accumulator, epsilon}},
      {"RowWiseAdaGrad",
       OptimizerType::kRowWiseAdaGrad,
       "adagrad_hparam",
       {kLearningRate, accumulator, rowwise_epsilon}},
  };
}

}  // namespace

const std::vector<OptimizerRules>& optimizer_rules() {
  static const std::vector<OptimizerRules> rules = build_rules();
  return rules;
}

const OptimizerRules& rules_of(OptimizerType type) {
  for (const auto& rules : optimizer_rules())
    if (rules.type == type) return rules;
  throw Error("optimizer type " + std::to_string(static_cast<int>(type)) + " is not an OptimizerType");
}

const OptimizerRules* find_optimizer_rules(const std::string& name) {
  for (const auto& rules : optimizer_rules())
    if (name == rules.name) return &rules;
  return nullptr;
}

}  // namespace embscale::config
