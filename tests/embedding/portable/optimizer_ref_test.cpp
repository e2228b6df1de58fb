// The optimizers as plain data (embedding/portable/optimizer_ref.hpp): what a device kernel will
// run from SparseOptimizer::portable_ref must be, bit for bit, what the host's optimizer classes
// do. Every type under every update type it has, on random rows, states and gradients (fixed
// seed), over steps where some rows are touched and others not (LazyGlobal's catch-up over the
// skipped steps included): update() against update_row, update_untouched() against untouched_row,
// init_state() against init_state_row; and update_row against its split for a kernel's thread per
// value (row_prologue, update_value for the values in a shuffled order, row_epilogue;
// untouched_value), which must not depend on the order of the values. The classes' own formulas are checked against the papers'
// in tests/embedding/optimizers/.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "embedding/portable/optimizer_ref.hpp"
#include "embedding/sparse_optimizer.hpp"

namespace embscale::embedding {
namespace {

using config::OptimizerType;

struct Case {
  OptimizerType type;
  UpdateType update;
};

config::Optimizer options_of(const Case& c) {
  config::Optimizer o;
  o.type = c.type;
  o.update_type = c.update;
  o.learning_rate = 0.037;
  o.momentum_factor = 0.87;
  o.beta1 = 0.91;
  o.beta2 = 0.997;
  o.epsilon = 1e-6;
  o.initial_accu_value = 0.125;
  return o;
}

// Bit equality, so that -0.0 and 0.0 (or two NaNs) are told apart as a kernel's result would be.
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<std::uint32_t>(a[i]) != std::bit_cast<std::uint32_t>(b[i])) return false;
  return true;
}

TEST(PortableOptimizer, EveryTypeAndUpdateTypeMatchesTheHostClassBitForBit) {
  const std::vector<Case> cases = {{OptimizerType::kSGD, UpdateType::kLocal},
                                   {OptimizerType::kSGD, UpdateType::kGlobal},
                                   {OptimizerType::kMomentumSGD, UpdateType::kLocal},
                                   {OptimizerType::kMomentumSGD, UpdateType::kGlobal},
                                   {OptimizerType::kNesterov, UpdateType::kLocal},
                                   {OptimizerType::kNesterov, UpdateType::kGlobal},
                                   {OptimizerType::kAdam, UpdateType::kLocal},
                                   {OptimizerType::kAdam, UpdateType::kGlobal},
                                   {OptimizerType::kAdam, UpdateType::kLazyGlobal},
                                   {OptimizerType::kAdaGrad, UpdateType::kLocal},
                                   {OptimizerType::kAdaGrad, UpdateType::kGlobal},
                                   {OptimizerType::kRowWiseAdaGrad, UpdateType::kLocal},
                                   {OptimizerType::kRowWiseAdaGrad, UpdateType::kGlobal}};
  std::mt19937_64 random(20261128);
  std::normal_distribution<float> value(0.0f, 0.3f);
  for (const Case& c : cases)
    for (const std::size_t dim : {std::size_t{1}, std::size_t{7}, std::size_t{32}}) {
      const auto optimizer = make_sparse_optimizer(options_of(c), static_cast<std::int32_t>(dim));
      const std::string what =
          std::string(optimizer->name()) + " " + config::to_string(c.update) + " dim " + std::to_string(dim);
      const auto width = static_cast<std::size_t>(optimizer->state_width());
      constexpr std::size_t kRows = 6;
      std::vector<std::vector<float>> rows(kRows), states(kRows);
      for (std::size_t r = 0; r < kRows; ++r) {
        rows[r].resize(dim);
        for (auto& x : rows[r]) x = value(random);
        states[r].resize(width);
        optimizer->init_state(states[r]);
        std::vector<float> portable_state(width, -9.0f);
        portable::init_state_row(optimizer->portable_ref(1), portable_state.data(), dim);
        ASSERT_TRUE(same_bits(states[r], portable_state)) << what << ": init_state";
      }
      auto host_rows = rows, host_states = states, value_rows = rows, value_states = states;
      std::vector<std::size_t> order(dim);
      for (std::size_t d = 0; d < dim; ++d) order[d] = d;
      for (std::int64_t step = 1; step <= 12; ++step) {
        const auto ref = optimizer->portable_ref(step);
        EXPECT_EQ(portable::moves_untouched_rows(ref), optimizer->changes_untouched_rows()) << what;
        for (std::size_t r = 0; r < kRows; ++r) {
          // Row r is touched on the steps where (step + r) % (r + 1) == 0: row 0 every step, row 5
          // every sixth, so LazyGlobal rows skip 0 to 5 steps.
          if ((static_cast<std::size_t>(step) + r) % (r + 1) == 0) {
            std::vector<float> grad(dim);
            for (auto& x : grad) x = value(random);
            optimizer->update(host_rows[r], host_states[r], grad, step);
            portable::update_row(ref, rows[r].data(), states[r].data(), grad.data(), dim);
            float* const row = value_rows[r].data();
            float* const state = value_states[r].data();
            const portable::RowPrologue prologue = portable::row_prologue(ref, state, grad.data(), dim);
            std::shuffle(order.begin(), order.end(), random);
            for (const std::size_t d : order) portable::update_value(ref, prologue, row, state, grad.data(), dim, d);
            portable::row_epilogue(ref, prologue, state, dim);
          } else {
            optimizer->update_untouched(host_rows[r], host_states[r], step);
            portable::untouched_row(ref, rows[r].data(), states[r].data(), dim);
            std::shuffle(order.begin(), order.end(), random);
            for (const std::size_t d : order)
              portable::untouched_value(ref, value_rows[r].data(), value_states[r].data(), dim, d);
          }
          ASSERT_TRUE(same_bits(host_rows[r], rows[r])) << what << ": row " << r << " at step " << step;
          ASSERT_TRUE(same_bits(host_states[r], states[r])) << what << ": state of row " << r << " at step " << step;
          ASSERT_TRUE(same_bits(host_rows[r], value_rows[r]))
              << what << ": row " << r << " value by value, step " << step;
          ASSERT_TRUE(same_bits(host_states[r], value_states[r]))
              << what << ": state of row " << r << " value by value, step " << step;
        }
      }
    }
}

}  // namespace
}  // namespace embscale::embedding
