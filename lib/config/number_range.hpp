// Accepted finite numbers: a range, the test and the words a message says it in. The JSON
// reader's numbers and the optimizers' hyper-parameters (optimizer_rules.hpp) are checked by it.
#pragma once

#include <cmath>
#include <limits>
#include <string>

namespace embscale::config {

struct NumberRange {
  double min = 0.0;
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;
  bool max_exclusive = false;
  static NumberRange above(double min) { return {min, std::numeric_limits<double>::infinity(), true}; }
  static NumberRange between(double min, double max) { return {min, max, false}; }
  static NumberRange from_up_to(double min, double max) { return {min, max, false, true}; }  // [min, max)
  // Finite and inside the bounds.
  bool contains(double x) const noexcept {
    return std::isfinite(x) && x >= min && !(min_exclusive && x == min) && x <= max && !(max_exclusive && x == max);
  }
  std::string describe() const;  // "a number > 0", "a number in [0, 100]", "a number in [0, 1)"
};

}  // namespace embscale::config
