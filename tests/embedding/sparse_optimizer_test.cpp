// make_sparse_optimizer: names and state widths of every type and update type, the state a row
// starts with, the refusals, and the Global rule for every optimizer: k untouched steps equal k
// updates with a zero gradient.
#include "embedding/sparse_optimizer.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "config/optimizer_rules.hpp"
#include "core/error.hpp"
#include "optimizers/optimizer_test_support.hpp"

namespace embscale::embedding {
namespace {

using config::OptimizerType;
using testing::options;
using testing::TrainedRow;

constexpr OptimizerType kAllTypes[] = {OptimizerType::kSGD,      OptimizerType::kMomentumSGD,
                                       OptimizerType::kNesterov, OptimizerType::kAdam,
                                       OptimizerType::kAdaGrad,  OptimizerType::kRowWiseAdaGrad};

std::string message_of(const std::function<void()>& make) {
  try {
    make();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SparseOptimizer, NamesAndStateWidths) {
  constexpr std::int32_t kDim = 8;
  struct Case {
    OptimizerType type;
    UpdateType update;
    const char* name;
    std::int32_t width;
  };
  const Case cases[] = {
      {OptimizerType::kSGD, UpdateType::kLocal, "SGD", 0},
      {OptimizerType::kSGD, UpdateType::kGlobal, "SGD", 0},
      {OptimizerType::kMomentumSGD, UpdateType::kLocal, "MomentumSGD", kDim},
      {OptimizerType::kNesterov, UpdateType::kGlobal, "Nesterov", kDim},
      {OptimizerType::kAdam, UpdateType::kLocal, "Adam", 2 * kDim},
      {OptimizerType::kAdam, UpdateType::kGlobal, "Adam", 2 * kDim},
      {OptimizerType::kAdam, UpdateType::kLazyGlobal, "Adam", 2 * kDim + 4},  // m, v, last step (4 digits)
      {OptimizerType::kAdaGrad, UpdateType::kLocal, "AdaGrad", kDim},
      {OptimizerType::kRowWiseAdaGrad, UpdateType::kGlobal, "RowWiseAdaGrad", 1},
  };
  for (const auto& c : cases) {
    const auto optimizer = make_sparse_optimizer(options(c.type, c.update), kDim);
    EXPECT_STREQ(optimizer->name(), c.name);
    EXPECT_EQ(optimizer->update_type(), c.update) << c.name;
    EXPECT_EQ(optimizer->state_width(), c.width) << c.name << " " << config::to_string(c.update);
  }
}

// SGD under sgd_hparam's schedule: each step moves a row by that step's rate (the schedule's own
// formula is config_optimizer_test's), on the host and in the OptimizerRef a device is handed.
TEST(SparseOptimizer, SgdFollowsItsLearningRateSchedule) {
  config::Optimizer o = options(OptimizerType::kSGD, UpdateType::kLocal);
  o.learning_rate = 0.8;
  o.warmup_steps = 4;
  o.decay_start = 6;
  o.decay_steps = 4;
  const auto sgd = make_sparse_optimizer(o, 2);
  for (std::int64_t step = 1; step <= 12; ++step) {
    std::vector<float> row = {1.0f, -2.0f};
    const std::vector<float> grad = {0.5f, 0.25f};
    sgd->update(row, {}, grad, step);
    const auto rate = static_cast<float>(o.learning_rate_at(step));
    EXPECT_FLOAT_EQ(row[0], 1.0f - rate * 0.5f) << "step " << step;
    EXPECT_FLOAT_EQ(row[1], -2.0f - rate * 0.25f) << "step " << step;
    EXPECT_FLOAT_EQ(sgd->portable_ref(step).lr, rate) << "step " << step;
  }
  EXPECT_FLOAT_EQ(static_cast<float>(o.learning_rate_at(2)), 0.4f);   // warming up
  EXPECT_FLOAT_EQ(static_cast<float>(o.learning_rate_at(12)), 0.0f);  // decayed
}

TEST(SparseOptimizer, NewRowsStartFromZerosOrTheInitialAccumulator) {
  for (const auto type : kAllTypes) {
    auto o = options(type);
    o.initial_accu_value = 0.25;
    const auto optimizer = make_sparse_optimizer(o, 3);
    std::vector<float> state(static_cast<std::size_t>(optimizer->state_width()), -1.0f);
    optimizer->init_state(state);
    const bool adagrad = type == OptimizerType::kAdaGrad || type == OptimizerType::kRowWiseAdaGrad;
    EXPECT_EQ(state, std::vector<float>(state.size(), adagrad ? 0.25f : 0.0f)) << config::to_string(type);
  }
}

// Only Global momentum and Adam move a row the step did not touch.
TEST(SparseOptimizer, WhichUpdateTypesChangeUntouchedRows) {
  for (const auto type : kAllTypes) {
    const bool moving =
        type == OptimizerType::kMomentumSGD || type == OptimizerType::kNesterov || type == OptimizerType::kAdam;
    EXPECT_EQ(make_sparse_optimizer(options(type, UpdateType::kGlobal), 4)->changes_untouched_rows(), moving)
        << config::to_string(type);
    EXPECT_FALSE(make_sparse_optimizer(options(type, UpdateType::kLocal), 4)->changes_untouched_rows());
  }
  EXPECT_FALSE(
      make_sparse_optimizer(options(OptimizerType::kAdam, UpdateType::kLazyGlobal), 4)->changes_untouched_rows());
}

// The Global rule for every optimizer: a row trained for a few steps, then k untouched steps, is
// where k updates with a zero gradient take it. Under Local, untouched steps change nothing.
TEST(SparseOptimizer, GlobalUntouchedStepsEqualZeroGradientUpdates) {
  constexpr std::size_t kDim = 5;
  const std::vector<float> zero(kDim, 0.0f);
  for (const auto type : kAllTypes) {
    auto o = options(type, UpdateType::kGlobal);
    o.momentum_factor = 0.9;
    TrainedRow skipped(o, {0.1f, -0.2f, 0.3f, -0.4f, 0.5f});
    TrainedRow zeroed(o, skipped.row);
    TrainedRow local(options(type, UpdateType::kLocal), skipped.row);
    for (std::int64_t t = 1; t <= 3; ++t) {
      for (auto* r : {&skipped, &zeroed, &local}) r->touch(testing::gradient(t, kDim), t);
    }
    const auto local_row = local.row;
    const auto local_state = local.state;
    for (std::int64_t t = 4; t <= 10; ++t) {
      skipped.skip(t);
      zeroed.touch(zero, t);
      local.skip(t);
    }
    for (std::size_t d = 0; d < kDim; ++d) EXPECT_FLOAT_EQ(skipped.row[d], zeroed.row[d]) << config::to_string(type);
    for (std::size_t i = 0; i < skipped.state.size(); ++i)
      EXPECT_FLOAT_EQ(skipped.state[i], zeroed.state[i]) << config::to_string(type);
    EXPECT_EQ(local.row, local_row) << config::to_string(type);
    EXPECT_EQ(local.state, local_state) << config::to_string(type);
  }
}

TEST(SparseOptimizer, RefusesLazyGlobalForAnyTypeButAdam) {
  for (const auto type : kAllTypes) {
    if (type == OptimizerType::kAdam) continue;
    EXPECT_EQ(message_of([&] { make_sparse_optimizer(options(type, UpdateType::kLazyGlobal), 4); }),
              "optimizer.update_type: \"LazyGlobal\" is defined for \"Adam\" only (as in HugeCTR), got type \"" +
                  config::to_string(type) + "\"");
  }
}

TEST(SparseOptimizer, RefusesHyperParametersOutOfRange) {
  struct Case {
    OptimizerType type;
    std::function<void(config::Optimizer&)> edit;
    std::string message;
  };
  const std::vector<Case> cases = {
      {OptimizerType::kSGD, [](auto& o) { o.learning_rate = 0.0; },
       "optimizer.learning_rate: expected a number > 0, got 0"},
      {OptimizerType::kMomentumSGD, [](auto& o) { o.momentum_factor = 1.0; },
       "optimizer.momentum_factor: expected a number in [0, 1), got 1"},
      {OptimizerType::kNesterov, [](auto& o) { o.momentum_factor = -0.5; },
       "optimizer.momentum_factor: expected a number in [0, 1), got -0.5"},
      {OptimizerType::kAdam, [](auto& o) { o.beta1 = 1.0; }, "optimizer.beta1: expected a number in [0, 1), got 1"},
      {OptimizerType::kAdam, [](auto& o) { o.beta2 = 1.5; }, "optimizer.beta2: expected a number in [0, 1), got 1.5"},
      {OptimizerType::kAdam, [](auto& o) { o.epsilon = 0.0; }, "optimizer.epsilon: expected a number > 0, got 0"},
      {OptimizerType::kAdaGrad, [](auto& o) { o.initial_accu_value = -1.0; },
       "optimizer.initial_accu_value: expected a number >= 0, got -1"},
      {OptimizerType::kRowWiseAdaGrad, [](auto& o) { o.epsilon = -1e-8; },
       "optimizer.epsilon: expected a number > 0, got -1e-08"},
  };
  for (const auto& c : cases) {
    auto o = options(c.type);
    c.edit(o);
    EXPECT_EQ(message_of([&] { make_sparse_optimizer(o, 4); }), c.message);
  }
  // A field the type does not read is not checked: its value is unused.
  auto sgd = options(OptimizerType::kSGD);
  sgd.beta1 = 7.0;
  EXPECT_EQ(make_sparse_optimizer(sgd, 4)->state_width(), 0);
}

// Every row of the config's rule table has a family here, which names itself by the row's name.
TEST(SparseOptimizer, EveryConfiguredTypeHasAFamily) {
  for (const auto& rules : config::optimizer_rules())
    EXPECT_STREQ(make_sparse_optimizer(options(rules.type), 4)->name(), rules.name);
}

TEST(SparseOptimizer, RefusesADimensionBelowOne) {
  EXPECT_THROW(make_sparse_optimizer(options(OptimizerType::kSGD), 0), Error);
}

}  // namespace
}  // namespace embscale::embedding
