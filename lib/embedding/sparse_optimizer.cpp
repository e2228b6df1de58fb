// make_sparse_optimizer: checks the options (the config parser has refused bad JSON already; this
// guards options built in code) and picks the family. The formulas are in optimizers/*.cpp.
#include "embedding/sparse_optimizer.hpp"

#include <cmath>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "embedding/optimizers/optimizer_base.hpp"

namespace embscale::embedding {
namespace {

using config::OptimizerType;

[[noreturn]] void refuse(const std::string& field, const std::string& expected, double got) {
  std::ostringstream message;
  message << "optimizer." << field << ": expected " << expected << ", got " << got;
  throw InputError(message.str());
}

// The ranges lib/config/README.md documents, for the fields `options.type` reads.
void check_options(const config::Optimizer& o) {
  const auto in_unit = [](double x) { return std::isfinite(x) && x >= 0.0 && x < 1.0; };
  const auto positive = [](double x) { return std::isfinite(x) && x > 0.0; };
  if (!positive(o.learning_rate)) refuse("learning_rate", "a number > 0", o.learning_rate);
  switch (o.type) {
    case OptimizerType::kSGD: break;
    case OptimizerType::kMomentumSGD:
    case OptimizerType::kNesterov:
      if (!in_unit(o.momentum_factor)) refuse("momentum_factor", "a number in [0, 1)", o.momentum_factor);
      break;
    case OptimizerType::kAdam:
      if (!in_unit(o.beta1)) refuse("beta1", "a number in [0, 1)", o.beta1);
      if (!in_unit(o.beta2)) refuse("beta2", "a number in [0, 1)", o.beta2);
      if (!positive(o.epsilon)) refuse("epsilon", "a number > 0", o.epsilon);
      break;
    case OptimizerType::kAdaGrad:
    case OptimizerType::kRowWiseAdaGrad:
      if (!(std::isfinite(o.initial_accu_value) && o.initial_accu_value >= 0.0))
        refuse("initial_accu_value", "a number >= 0", o.initial_accu_value);
      if (!positive(o.epsilon)) refuse("epsilon", "a number > 0", o.epsilon);
      break;
  }
  if (o.update_type == UpdateType::kLazyGlobal && o.type != OptimizerType::kAdam)
    throw InputError("optimizer.update_type: \"LazyGlobal\" is defined for \"Adam\" only (as in HugeCTR), got type \"" +
                     config::to_string(o.type) + "\"");
}

}  // namespace

std::unique_ptr<SparseOptimizer> make_sparse_optimizer(const config::Optimizer& options, std::int32_t dim) {
  EMBSCALE_EXPECTS(dim >= 1, "an embedding dimension >= 1, got " + std::to_string(dim));
  check_options(options);
  switch (options.type) {
    case OptimizerType::kSGD: return optimizers::make_sgd(options);
    case OptimizerType::kMomentumSGD: return optimizers::make_momentum_sgd(options, dim);
    case OptimizerType::kNesterov: return optimizers::make_nesterov(options, dim);
    case OptimizerType::kAdam:
      return options.update_type == UpdateType::kLazyGlobal ? optimizers::make_lazy_adam(options, dim)
                                                            : optimizers::make_adam(options, dim);
    case OptimizerType::kAdaGrad: return optimizers::make_adagrad(options, dim);
    case OptimizerType::kRowWiseAdaGrad: return optimizers::make_rowwise_adagrad(options);
  }
  throw Error("optimizer type " + std::to_string(static_cast<int>(options.type)) + " is not an OptimizerType");
}

}  // namespace embscale::embedding
