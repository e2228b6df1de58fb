// Helpers of the sparse optimizer tests: options built in code, one row trained by an optimizer,
// and the comparison of its float results with double-precision references written in the tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "config/config.hpp"
#include "embedding/sparse_optimizer.hpp"

namespace embscale::embedding::testing {

inline config::Optimizer options(config::OptimizerType type, UpdateType update = UpdateType::kLocal,
                                 double learning_rate = 0.1) {
  config::Optimizer o;
  o.type = type;
  o.update_type = update;
  o.learning_rate = learning_rate;
  if (type == config::OptimizerType::kRowWiseAdaGrad) o.epsilon = 1e-8;  // the parser's default for it
  return o;
}

// A row and its state, as a table stores them, trained by one optimizer.
struct TrainedRow {
  std::unique_ptr<SparseOptimizer> optimizer;
  std::vector<float> row;
  std::vector<float> state;

  TrainedRow(const config::Optimizer& o, std::vector<float> initial)
      : optimizer(make_sparse_optimizer(o, static_cast<std::int32_t>(initial.size()))), row(std::move(initial)) {
    state.resize(static_cast<std::size_t>(optimizer->state_width()));
    optimizer->init_state(state);
  }

  void touch(const std::vector<float>& grad, std::int64_t step) { optimizer->update(row, state, grad, step); }
  void skip(std::int64_t step) { optimizer->update_untouched(row, state, step); }
  // State values [first, first + count).
  std::vector<float> state_part(std::size_t first, std::size_t count) const {
    return {state.begin() + static_cast<std::ptrdiff_t>(first),
            state.begin() + static_cast<std::ptrdiff_t>(first + count)};
  }
};

// Float results against a double reference: the float arithmetic of a few steps stays within a few
// ulps of values of order 1 (relative 1e-6, absolute 1e-6 near 0).
inline void expect_close(const std::vector<float>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-6 * std::max(1.0, std::fabs(want[i]))) << what << " [" << i << "]";
}

// Deterministic test gradients in [-1, 1) without an RNG dependency: g(step, d).
inline std::vector<float> gradient(std::int64_t step, std::size_t dim) {
  std::vector<float> g(dim);
  for (std::size_t d = 0; d < dim; ++d)
    g[d] = static_cast<float>(std::sin(0.7 * static_cast<double>(step) + 1.3 * static_cast<double>(d)));
  return g;
}

}  // namespace embscale::embedding::testing
