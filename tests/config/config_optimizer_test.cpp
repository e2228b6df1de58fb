// The optimizer section: every type with its block and HugeCTR's defaults, the update types
// (HugeCTR's update_type and its older global_update), the per-layer override, and every refusal
// with its whole message (another type's block or key, LazyGlobal beside another type than Adam,
// ranges, types embscale does not run).
#include <gtest/gtest.h>

#include <functional>

#include "config_test_support.hpp"

namespace embscale::config {
namespace {

using testing::default_json;
using testing::error_of;
using testing::layer;

// The global optimizer of the default config replaced by `optimizer` (JSON text).
Optimizer parse_with(const std::string& optimizer) {
  auto j = default_json();
  j["optimizer"] = nlohmann::json::parse(optimizer);
  return parse_config(j, "t").optimizer;
}

std::string error_with(const std::string& optimizer) {
  auto j = default_json();
  j["optimizer"] = nlohmann::json::parse(optimizer);
  return error_of(j);
}

TEST(ConfigOptimizer, EveryTypeReadsItsBlockWithHugeCtrsDefaults) {
  const auto sgd = parse_with(R"({"type": "SGD", "sgd_hparam": {"learning_rate": 0.5}})");
  EXPECT_EQ(sgd.type, OptimizerType::kSGD);
  EXPECT_DOUBLE_EQ(sgd.learning_rate, 0.5);
  EXPECT_TRUE(sgd.atomic_update);  // HugeCTR's CreateOptimizer default

  const auto momentum = parse_with(R"({"type": "MomentumSGD", "momentum_sgd_hparam": {"learning_rate": 0.01}})");
  EXPECT_EQ(momentum.type, OptimizerType::kMomentumSGD);
  EXPECT_DOUBLE_EQ(momentum.learning_rate, 0.01);
  EXPECT_DOUBLE_EQ(momentum.momentum_factor, 0.0);

  const auto nesterov = parse_with(R"({"type": "Nesterov", "nesterov_hparam": {"learning_rate": 0.01}})");
  EXPECT_EQ(nesterov.type, OptimizerType::kNesterov);
  EXPECT_DOUBLE_EQ(nesterov.momentum_factor, 0.0);

  const auto adam = parse_with(R"({"type": "Adam", "adam_hparam": {"learning_rate": 0.001}})");
  EXPECT_EQ(adam.type, OptimizerType::kAdam);
  EXPECT_DOUBLE_EQ(adam.learning_rate, 0.001);
  EXPECT_DOUBLE_EQ(adam.beta1, 0.9);
  EXPECT_DOUBLE_EQ(adam.beta2, 0.999);
  EXPECT_DOUBLE_EQ(adam.epsilon, 1e-7);

  const auto adagrad = parse_with(R"({"type": "AdaGrad", "adagrad_hparam": {"learning_rate": 0.1}})");
  EXPECT_EQ(adagrad.type, OptimizerType::kAdaGrad);
  EXPECT_DOUBLE_EQ(adagrad.initial_accu_value, 0.0);
  EXPECT_DOUBLE_EQ(adagrad.epsilon, 1e-7);

  const auto rowwise = parse_with(R"({"type": "RowWiseAdaGrad", "adagrad_hparam": {"learning_rate": 0.1}})");
  EXPECT_EQ(rowwise.type, OptimizerType::kRowWiseAdaGrad);
  EXPECT_DOUBLE_EQ(rowwise.initial_accu_value, 0.0);
  EXPECT_DOUBLE_EQ(rowwise.epsilon, 1e-8);  // FBGEMM's default

  for (const auto* text : {R"({"type": "SGD", "sgd_hparam": {"learning_rate": 0.5}})",
                           R"({"type": "Adam", "adam_hparam": {"learning_rate": 0.001}})"})
    EXPECT_EQ(parse_with(text).update_type, UpdateType::kLocal) << text;  // HugeCTR's default
}

TEST(ConfigOptimizer, EveryGivenHyperParameterIsRead) {
  const auto sgd = parse_with(R"({"type": "SGD", "sgd_hparam": {"learning_rate": 0.5, "atomic_update": false}})");
  EXPECT_FALSE(sgd.atomic_update);
  EXPECT_DOUBLE_EQ(
      parse_with(R"({"type": "Nesterov", "nesterov_hparam": {"learning_rate": 0.01, "momentum_factor": 0.9}})")
          .momentum_factor,
      0.9);
  const auto adam = parse_with(
      R"({"type": "Adam", "adam_hparam": {"learning_rate": 0.002, "beta1": 0.8, "beta2": 0.99, "epsilon": 1e-6}})");
  EXPECT_DOUBLE_EQ(adam.beta1, 0.8);
  EXPECT_DOUBLE_EQ(adam.beta2, 0.99);
  EXPECT_DOUBLE_EQ(adam.epsilon, 1e-6);
  const auto rowwise = parse_with(
      R"({"type": "RowWiseAdaGrad",
          "adagrad_hparam": {"learning_rate": 0.1, "initial_accu_value": 0.5, "epsilon": 1e-5}})");
  EXPECT_DOUBLE_EQ(rowwise.initial_accu_value, 0.5);
  EXPECT_DOUBLE_EQ(rowwise.epsilon, 1e-5);
}

// SGD's learning-rate schedule (HugeCTR's DLRM samples give it in sgd_hparam), against HugeCTR's
// LearningRateScheduler written out step by step: linear warm-up, the rate, then a polynomial
// decay, at least end_lr; and the defaults, under which every step has the rate.
TEST(ConfigOptimizer, SgdsLearningRateSchedule) {
  const auto sgd = parse_with(R"({"type": "SGD", "sgd_hparam": {"learning_rate": 24, "warmup_steps": 4,
      "decay_start": 10, "decay_steps": 5, "decay_power": 2.0, "end_lr": 1.5}})");
  EXPECT_DOUBLE_EQ(sgd.warmup_steps, 4);
  EXPECT_DOUBLE_EQ(sgd.decay_start, 10);
  EXPECT_DOUBLE_EQ(sgd.decay_steps, 5);
  EXPECT_DOUBLE_EQ(sgd.decay_power, 2.0);
  EXPECT_DOUBLE_EQ(sgd.end_lr, 1.5);
  const double expected[] = {
      6,         12,        18,        24,          // steps 1-4: step x 24 / 4
      24,        24,        24,        24, 24, 24,  // 5-10: up to decay_start
      24 * 0.64, 24 * 0.36, 24 * 0.16,              // 11-13: 24 ((15 - step) / 5)^2
      1.5,       1.5,       1.5,       1.5};        // 14-17: 24 x 0.04 = 0.96 and below, held at end_lr
  for (int step = 1; step <= 17; ++step)
    EXPECT_NEAR(sgd.learning_rate_at(step), expected[step - 1], 1e-12) << "step " << step;
  const auto plain = parse_with(R"({"type": "SGD", "sgd_hparam": {"learning_rate": 0.5}})");
  for (const int step : {1, 2, 1000}) EXPECT_DOUBLE_EQ(plain.learning_rate_at(step), 0.5);
  // No warm-up (0, as 1) and a decay to 0.
  const auto decay = parse_with(R"({"type": "SGD", "sgd_hparam": {"learning_rate": 2, "warmup_steps": 0,
      "decay_start": 1, "decay_steps": 2, "decay_power": 1}})");
  EXPECT_DOUBLE_EQ(decay.learning_rate_at(1), 2);
  EXPECT_DOUBLE_EQ(decay.learning_rate_at(2), 1);
  EXPECT_DOUBLE_EQ(decay.learning_rate_at(3), 0);
  EXPECT_DOUBLE_EQ(decay.learning_rate_at(9), 0);
}

// The examples of HugeCTR's documentation ("optimizer" in its JSON configuration guide).
TEST(ConfigOptimizer, HugeCtrsDocumentedExamplesParse) {
  const auto adam = parse_with(R"({"type": "Adam", "update_type": "Global",
      "adam_hparam": {"learning_rate": 0.001, "beta1": 0.9, "beta2": 0.999, "epsilon": 0.0000001}})");
  EXPECT_EQ(adam.update_type, UpdateType::kGlobal);
  const auto momentum = parse_with(R"({"type": "MomentumSGD", "update_type": "Local",
      "momentum_sgd_hparam": {"learning_rate": 0.01, "momentum_factor": 0.0}})");
  EXPECT_EQ(momentum.update_type, UpdateType::kLocal);
  const auto nesterov = parse_with(R"({"type": "Nesterov", "update_type": "Global",
      "nesterov_hparam": {"learning_rate": 0.01, "momentum_factor": 0.0}})");
  EXPECT_EQ(nesterov.update_type, UpdateType::kGlobal);
  const auto lazy = parse_with(R"({"type": "Adam", "update_type": "LazyGlobal", "learning_rate": true,
      "adam_hparam": {"learning_rate": 0.001, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-7}})");
  EXPECT_EQ(lazy.update_type, UpdateType::kLazyGlobal);
}

// HugeCTR's older spelling of the update type (its parser reads it when update_type is absent).
TEST(ConfigOptimizer, GlobalUpdateIsHugeCtrsOlderUpdateType) {
  EXPECT_EQ(parse_with(R"({"type": "SGD", "global_update": true, "sgd_hparam": {"learning_rate": 0.5}})").update_type,
            UpdateType::kGlobal);
  EXPECT_EQ(parse_with(R"({"type": "SGD", "global_update": false, "sgd_hparam": {"learning_rate": 0.5}})").update_type,
            UpdateType::kLocal);
}

TEST(ConfigOptimizer, NamesRoundTrip) {
  for (const auto type : {OptimizerType::kSGD, OptimizerType::kMomentumSGD, OptimizerType::kNesterov,
                          OptimizerType::kAdam, OptimizerType::kAdaGrad, OptimizerType::kRowWiseAdaGrad}) {
    const std::string block = type == OptimizerType::kSGD           ? "sgd_hparam"
                              : type == OptimizerType::kMomentumSGD ? "momentum_sgd_hparam"
                              : type == OptimizerType::kNesterov    ? "nesterov_hparam"
                              : type == OptimizerType::kAdam        ? "adam_hparam"
                                                                    : "adagrad_hparam";
    const nlohmann::json j = {{"type", to_string(type)}, {block, {{"learning_rate", 0.1}}}};
    EXPECT_EQ(parse_with(j.dump()).type, type) << to_string(type);
  }
  EXPECT_EQ(to_string(UpdateType::kLocal), "Local");
  EXPECT_EQ(to_string(UpdateType::kGlobal), "Global");
  EXPECT_EQ(to_string(UpdateType::kLazyGlobal), "LazyGlobal");
}

struct ErrorCase {
  std::string optimizer;  // JSON text
  std::string message;    // without the "test.json: " origin
};

void expect_messages(const std::vector<ErrorCase>& cases) {
  for (const auto& c : cases) EXPECT_EQ(error_with(c.optimizer), "test.json: " + c.message) << c.optimizer;
}

TEST(ConfigOptimizerErrors, TypesEmbscaleDoesNotRunOrKnow) {
  constexpr auto kSupported = R"("SGD", "MomentumSGD", "Nesterov", "Adam", "AdaGrad" or "RowWiseAdaGrad")";
  expect_messages({
      {R"({"type": "Ftrl", "ftrl_hparam": {}})",
       std::string("optimizer.type: \"Ftrl\" is a HugeCTR optimizer embscale does not run; supported: ") + kSupported},
      {R"({"type": "Adagrad", "adagrad_hparam": {"learning_rate": 0.1}})",
       std::string("optimizer.type: expected ") + kSupported + ", got \"Adagrad\"; did you mean \"AdaGrad\"?"},
      {R"({"type": "sgd", "sgd_hparam": {"learning_rate": 0.1}})",
       std::string("optimizer.type: expected ") + kSupported + ", got \"sgd\"; did you mean \"SGD\"?"},
      {R"({"sgd_hparam": {"learning_rate": 0.1}})",
       std::string("optimizer.type: required key is missing; expected ") + kSupported},
  });
}

TEST(ConfigOptimizerErrors, AnotherTypesBlockNamesTheTypesThatReadIt) {
  expect_messages({
      {R"({"type": "SGD", "sgd_hparam": {"learning_rate": 0.1}, "adam_hparam": {"learning_rate": 0.001}})",
       "optimizer.adam_hparam: the hyper-parameters of \"Adam\", but the type is \"SGD\", which reads sgd_hparam"},
      {R"({"type": "Adam", "sgd_hparam": {"learning_rate": 0.1}})",
       "optimizer.sgd_hparam: the hyper-parameters of \"SGD\", but the type is \"Adam\", which reads adam_hparam"},
      {R"({"type": "Nesterov", "nesterov_hparam": {"learning_rate": 0.1}, "adagrad_hparam": {}})",
       "optimizer.adagrad_hparam: the hyper-parameters of \"AdaGrad\" or \"RowWiseAdaGrad\", but the type is "
       "\"Nesterov\", which reads nesterov_hparam"},
      {R"({"type": "MomentumSGD", "momentum_sgd_hparam": {"learning_rate": 0.1}, "nesterov_hparam": {}})",
       "optimizer.nesterov_hparam: the hyper-parameters of \"Nesterov\", but the type is \"MomentumSGD\", which reads "
       "momentum_sgd_hparam"},
      {R"({"type": "AdaGrad", "adagrad_hparam": {"learning_rate": 0.1}, "momentum_sgd_hparam": {}})",
       "optimizer.momentum_sgd_hparam: the hyper-parameters of \"MomentumSGD\", but the type is \"AdaGrad\", which "
       "reads adagrad_hparam"},
      {R"({"type": "Adam", "adam_hparam": {"learning_rate": 0.1}, "ftrl_hparam": {}})",
       "optimizer.ftrl_hparam: the hyper-parameters of \"Ftrl\" (not run by embscale), but the type is \"Adam\", which "
       "reads adam_hparam"},
  });
  // In a layer's own optimizer, the path names the layer.
  auto j = default_json();
  layer(j, "emb1")["optimizer"] = {{"type", "Adam"},
                                   {"adam_hparam", {{"learning_rate", 0.001}}},
                                   {"momentum_sgd_hparam", {{"momentum_factor", 0.9}}}};
  EXPECT_EQ(error_of(j),
            "test.json: layers[emb1].optimizer.momentum_sgd_hparam: the hyper-parameters of \"MomentumSGD\", but the "
            "type is \"Adam\", which reads adam_hparam");
}

TEST(ConfigOptimizerErrors, AnotherTypesKeyInTheBlockNamesTheTypesThatReadIt) {
  expect_messages({
      {R"({"type": "SGD", "sgd_hparam": {"learning_rate": 0.1, "beta1": 0.9}})",
       "optimizer.sgd_hparam.beta1: a hyper-parameter of \"Adam\", not of \"SGD\"; sgd_hparam takes \"learning_rate\", "
       "\"atomic_update\", \"warmup_steps\", \"decay_start\", \"decay_steps\", \"decay_power\" or \"end_lr\""},
      {R"({"type": "AdaGrad", "adagrad_hparam": {"learning_rate": 0.1, "momentum_factor": 0.9}})",
       "optimizer.adagrad_hparam.momentum_factor: a hyper-parameter of \"MomentumSGD\" or \"Nesterov\", not of "
       "\"AdaGrad\"; adagrad_hparam takes \"learning_rate\", \"initial_accu_value\" or \"epsilon\""},
      {R"({"type": "Nesterov", "nesterov_hparam": {"learning_rate": 0.1, "epsilon": 1e-7}})",
       "optimizer.nesterov_hparam.epsilon: a hyper-parameter of \"Adam\", \"AdaGrad\" or \"RowWiseAdaGrad\", not of "
       "\"Nesterov\"; nesterov_hparam takes \"learning_rate\" or \"momentum_factor\""},
      {R"({"type": "Adam", "adam_hparam": {"learning_rate": 0.1, "beta_1": 0.9}})",
       "optimizer.adam_hparam.beta_1: unknown key; did you mean \"beta1\"?"},
  });
}

TEST(ConfigOptimizerErrors, LazyGlobalIsForAdamOnly) {
  for (const auto& [type, block] :
       std::vector<std::pair<std::string, std::string>>{{"SGD", "sgd_hparam"},
                                                        {"MomentumSGD", "momentum_sgd_hparam"},
                                                        {"Nesterov", "nesterov_hparam"},
                                                        {"AdaGrad", "adagrad_hparam"},
                                                        {"RowWiseAdaGrad", "adagrad_hparam"}}) {
    const nlohmann::json j = {{"type", type}, {"update_type", "LazyGlobal"}, {block, {{"learning_rate", 0.1}}}};
    EXPECT_EQ(error_with(j.dump()),
              "test.json: optimizer.update_type: \"LazyGlobal\" is defined for \"Adam\" only (as "
              "in HugeCTR), got type \"" +
                  type + "\"; use \"Local\" or \"Global\"");
  }
  expect_messages({
      {R"({"type": "Adam", "update_type": "Lazy", "adam_hparam": {"learning_rate": 0.1}})",
       "optimizer.update_type: expected \"Local\", \"Global\" or \"LazyGlobal\", got \"Lazy\""},
      {R"({"type": "Adam", "update_type": "Global", "global_update": true, "adam_hparam": {"learning_rate": 0.1}})",
       "optimizer.global_update: give update_type or HugeCTR's older global_update, not both"},
      {R"({"type": "Adam", "global_update": "yes", "adam_hparam": {"learning_rate": 0.1}})",
       "optimizer.global_update: expected true or false, got \"yes\""},
  });
}

TEST(ConfigOptimizerErrors, RangesAndMissingFields) {
  expect_messages({
      {R"({"type": "SGD", "sgd_hparam": {"learning_rate": 0}})",
       "optimizer.sgd_hparam.learning_rate: expected a number > 0, got 0"},
      {R"({"type": "SGD", "sgd_hparam": {"learning_rate": "0.1"}})",
       "optimizer.sgd_hparam.learning_rate: expected a number > 0, got \"0.1\""},
      {R"({"type": "Adam", "adam_hparam": {"beta1": 0.9}})",
       "optimizer.adam_hparam.learning_rate: required key is missing; expected a number > 0"},
      {R"({"type": "SGD"})", "optimizer.sgd_hparam: required key is missing; expected an object"},
      {R"({"type": "Adam", "adam_hparam": 0.001})", "optimizer.adam_hparam: expected an object, got 0.001"},
      {R"({"type": "SGD", "sgd_hparam": {"learning_rate": 0.1, "atomic_update": 1}})",
       "optimizer.sgd_hparam.atomic_update: expected true or false, got 1"},
      {R"({"type": "MomentumSGD", "momentum_sgd_hparam": {"learning_rate": 0.1, "momentum_factor": 1}})",
       "optimizer.momentum_sgd_hparam.momentum_factor: expected a number in [0, 1), got 1"},
      {R"({"type": "Nesterov", "nesterov_hparam": {"learning_rate": 0.1, "momentum_factor": -0.1}})",
       "optimizer.nesterov_hparam.momentum_factor: expected a number in [0, 1), got -0.1"},
      {R"({"type": "Adam", "adam_hparam": {"learning_rate": 0.1, "beta1": 1.0}})",
       "optimizer.adam_hparam.beta1: expected a number in [0, 1), got 1.0"},
      {R"({"type": "Adam", "adam_hparam": {"learning_rate": 0.1, "beta2": 1.5}})",
       "optimizer.adam_hparam.beta2: expected a number in [0, 1), got 1.5"},
      {R"({"type": "Adam", "adam_hparam": {"learning_rate": 0.1, "epsilon": 0}})",
       "optimizer.adam_hparam.epsilon: expected a number > 0, got 0"},
      {R"({"type": "AdaGrad", "adagrad_hparam": {"learning_rate": 0.1, "initial_accu_value": -1}})",
       "optimizer.adagrad_hparam.initial_accu_value: expected a number >= 0, got -1"},
      {R"({"type": "RowWiseAdaGrad", "adagrad_hparam": {"learning_rate": 0.1, "epsilon": -1e-8}})",
       "optimizer.adagrad_hparam.epsilon: expected a number > 0, got -1e-08"},
      {R"({"type": "SGD", "sgd_hparam": {"learning_rate": 0.1, "warmup_steps": 2.5}})",
       "optimizer.sgd_hparam.warmup_steps: expected an integer in [0, 1000000000000000], got 2.5"},
      {R"({"type": "SGD", "sgd_hparam": {"learning_rate": 0.1, "decay_steps": 0}})",
       "optimizer.sgd_hparam.decay_steps: expected an integer in [1, 1000000000000000], got 0"},
      {R"({"type": "SGD", "sgd_hparam": {"learning_rate": 0.1, "decay_power": 0.5}})",
       "optimizer.sgd_hparam.decay_power: expected a number in [1, 1000000], got 0.5"},
      {R"({"type": "Adam", "adam_hparam": {"learning_rate": 0.1, "warmup_steps": 10}})",
       "optimizer.adam_hparam.warmup_steps: a hyper-parameter of \"SGD\", not of \"Adam\"; adam_hparam takes "
       "\"learning_rate\", \"beta1\", \"beta2\" or \"epsilon\""},
      {R"({"type": "SGD", "learning_rate": 0.1, "sgd_hparam": {"learning_rate": 0.1}})",
       "optimizer.learning_rate: expected true or false (HugeCTR's flag; the learning rate goes in the type's hparam "
       "block, e.g. sgd_hparam.learning_rate), got 0.1"},
  });
}

}  // namespace
}  // namespace embscale::config
