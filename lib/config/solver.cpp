// The "solver" section.
#include "config/hugectr_names.hpp"
#include "config/sections.hpp"
#include "core/error.hpp"

namespace embscale::config {

Solver parse_solver(const ObjectReader& r) {
  std::vector<std::string> keys = {"batchsize", "batchsize_per_rank", "max_iter", "warmup_iter", "display",
                                   "seed",      "input_key_type"};
  r.only_keys(hugectr::with_unused_keys(keys, hugectr::UnusedIn::kSolver));
  Solver s;
  if (const auto per_rank = r.optional("batchsize_per_rank")) {
    if (r.has("batchsize"))
      per_rank->fail_with(
          "give batchsize (the global batch: strong scaling) or batchsize_per_rank (weak scaling), "
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
  hugectr::check_unused_keys(r, hugectr::UnusedIn::kSolver);
  return s;
}

}  // namespace embscale::config
