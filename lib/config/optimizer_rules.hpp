// Every optimizer embscale runs, in one place, as lib/kv/score_rules.hpp does for score
// strategies: a row per optimizer saying its config name (HugeCTR's, and "RowWiseAdaGrad" for
// FBGEMM's EXACT_ROWWISE_ADAGRAD), the hyper-parameter block it reads, each hyper-parameter's key,
// field, accepted range and default, and whether it runs HugeCTR's LazyGlobal update. The config
// parser (optimizer.cpp) and the check of options built in code (lib/embedding/sparse_optimizer.cpp)
// read the rows; neither switches over OptimizerType. The formulas are lib/embedding/optimizers/;
// lib/embedding's optimizer factories name each row's type once.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "config/number_range.hpp"

namespace embscale::config {

struct HyperParameter {
  const char* key;                        // in the row's block (HugeCTR's name)
  double Optimizer::*number = nullptr;    // where a number goes...
  bool Optimizer::*flag = nullptr;        // ...or a boolean (SGD's atomic_update)
  NumberRange range{};                    // a number's accepted values
  bool required = false;                  // learning_rate: HugeCTR has no default
  std::optional<double> default_value{};  // this type's default where it differs from Optimizer's
  bool integer = false;                   // a count (read as an integer within `range`)
};

struct OptimizerRules {
  const char* name;  // the config's "type"
  OptimizerType type;
  const char* block;                       // its *_hparam object
  std::vector<HyperParameter> parameters;  // in the order they are read and checked
  bool lazy_global = false;                // may run "update_type": "LazyGlobal" (Adam only, as HugeCTR)
};

// Every row, in the order messages list them; each OptimizerType exactly once.
const std::vector<OptimizerRules>& optimizer_rules();
// The row of `type` (every type has one).
const OptimizerRules& rules_of(OptimizerType type);
// The row named `name`; null when none is.
const OptimizerRules* find_optimizer_rules(const std::string& name);

}  // namespace embscale::config
