// make_sparse_optimizer: checks the options by their type's row of config/optimizer_rules.hpp (the
// config parser has refused bad JSON already; this guards options built in code) and picks the
// family. The formulas are in optimizers/*.cpp.
#include "embedding/sparse_optimizer.hpp"

#include <sstream>
#include <string>

#include "config/optimizer_rules.hpp"
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

// The ranges of the type's row (config/optimizer_rules.hpp), for the fields it reads.
void check_options(const config::Optimizer& o, const config::OptimizerRules& rules) {
  for (const auto& parameter : rules.parameters)
    if (parameter.number && !parameter.range.contains(o.*parameter.number))
      refuse(parameter.key, parameter.range.describe(), o.*parameter.number);
  if (o.update_type == UpdateType::kLazyGlobal && !rules.lazy_global)
    throw InputError("optimizer.update_type: \"LazyGlobal\" is defined for \"Adam\" only (as in HugeCTR), got type \"" +
                     std::string(rules.name) + "\"");
}

// Each type's family (optimizers/<family>.cpp): the one place a type meets its formulas.
using Factory = std::unique_ptr<SparseOptimizer> (*)(const config::Optimizer&, std::int32_t dim);
struct Family {
  OptimizerType type;
  Factory make;
};
const Family kFamilies[] = {
    {OptimizerType::kSGD, [](const config::Optimizer& o, std::int32_t) { return optimizers::make_sgd(o); }},
    {OptimizerType::kMomentumSGD, optimizers::make_momentum_sgd},
    {OptimizerType::kNesterov, optimizers::make_nesterov},
    // LazyGlobal is Adam's own family: its rows carry the step they were last touched.
    {OptimizerType::kAdam,
     [](const config::Optimizer& o, std::int32_t dim) {
       return o.update_type == UpdateType::kLazyGlobal ? optimizers::make_lazy_adam(o, dim)
                                                       : optimizers::make_adam(o, dim);
     }},
    {OptimizerType::kAdaGrad, optimizers::make_adagrad},
    {OptimizerType::kRowWiseAdaGrad,
     [](const config::Optimizer& o, std::int32_t) { return optimizers::make_rowwise_adagrad(o); }},
};

}  // namespace

std::unique_ptr<SparseOptimizer> make_sparse_optimizer(const config::Optimizer& options, std::int32_t dim) {
  EMBSCALE_EXPECTS(dim >= 1, "an embedding dimension >= 1, got " + std::to_string(dim));
  check_options(options, config::rules_of(options.type));
  for (const auto& family : kFamilies)
    if (family.type == options.type) return family.make(options, dim);
  throw Error("optimizer type " + config::to_string(options.type) + " has no family in lib/embedding/optimizers");
}

}  // namespace embscale::embedding
