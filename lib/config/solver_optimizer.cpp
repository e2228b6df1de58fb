// The "solver" and "optimizer" sections (the optimizer schema serves the global optimizer and
// every per-layer one).
#include <algorithm>

#include "config/hugectr_names.hpp"
#include "config/sections.hpp"
#include "core/error.hpp"

namespace embscale::config {
namespace {

std::vector<std::string> with(std::vector<std::string> keys, const std::vector<std::string>& more) {
  keys.insert(keys.end(), more.begin(), more.end());
  return keys;
}

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

Solver parse_solver(const ObjectReader& r) {
  r.only_keys(with({"batchsize", "batchsize_per_rank", "max_iter", "warmup_iter", "display", "seed", "input_key_type"},
                   hugectr::unused_solver_keys()));
  Solver s;
  if (const auto per_rank = r.optional("batchsize_per_rank")) {
    if (r.has("batchsize"))
      per_rank->fail_with("give batchsize (the global batch: strong scaling) or batchsize_per_rank (weak scaling), "
                          "not both");
    s.batchsize_per_rank = per_rank->integer(IntRange::at_least(1));
  } else {
    s.batchsize = r.integer("batchsize", IntRange::at_least(1));
  }
  s.max_iter = r.integer("max_iter", IntRange::at_least(1));
  s.warmup_iter = r.integer_or("warmup_iter", 0, IntRange::at_least(0));
  s.display = r.integer_or("display", 0, IntRange::at_least(0));
  s.seed = r.unsigned_or("seed", 0);
  if (r.has("input_key_type")) s.input_key_type = r.one_of("input_key_type", {"I32", "I64"});  // HugeCTR's
  hugectr::check_unused_solver_keys(r);
  return s;
}

Optimizer parse_optimizer(const ObjectReader& r) {
  r.only_keys(with({"type", "update_type", "sgd_hparam"}, hugectr::unused_optimizer_keys()));

  // The type decides which hparam block is read, so it is checked first.
  const auto type_value = r.required("type", "\"SGD\"");
  const auto type = type_value.string();
  if (contains(hugectr::known_optimizer_types(), type))
    type_value.fail_with("\"" + type + "\" is a HugeCTR optimizer embscale does not run yet; supported: \"SGD\"");
  if (type != "SGD")
    type_value.fail("\"SGD\" (HugeCTR's " + quoted_list(hugectr::known_optimizer_types()) + " are not run yet)",
                    did_you_mean(type, with({"SGD"}, hugectr::known_optimizer_types())));

  // HugeCTR's default update is "Local": only rows the batch touched are updated.
  if (const auto update = r.optional("update_type")) {
    const auto update_type = update->one_of(hugectr::known_update_types());
    if (update_type != "Local")
      update->fail_with("only \"Local\" (update the rows a batch touched) is supported in this version, got \"" +
                        update_type + "\"");
  }

  const auto hparam = r.object("sgd_hparam");
  hparam.only_keys({"learning_rate", "atomic_update"});
  Optimizer o;
  o.type = OptimizerType::kSGD;
  o.learning_rate = hparam.number("learning_rate", NumberRange::above(0.0));
  if (const auto atomic = hparam.optional("atomic_update")) atomic->boolean();  // HugeCTR's; unused
  hugectr::check_unused_optimizer_keys(r);
  return o;
}

}  // namespace embscale::config
