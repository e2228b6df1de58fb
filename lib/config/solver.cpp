// The "solver" section.
#include "config/hugectr_names.hpp"
#include "config/sections.hpp"
#include "core/error.hpp"

namespace embscale::config {
namespace {

// HugeCTR's "gpu": [0, 1] (one node) or [[0, 1], [1, 2]] (a list per node).
std::vector<std::vector<std::int32_t>> parse_gpu_lists(const ValueReader& v) {
  constexpr auto expected = "a list of GPU indices, or one list per node";
  constexpr auto max_index = 1 << 16;
  std::vector<std::vector<std::int32_t>> nodes;
  std::vector<std::int32_t> one_node;
  bool per_node = false;
  const auto entries = v.array(0, expected);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& entry = entries[i];
    if (i > 0 && entry.json().is_array() != per_node) entry.fail(expected + std::string(", not both"));
    per_node = entry.json().is_array();
    if (per_node) {
      auto& list = nodes.emplace_back();
      for (const auto& index : entry.array(1, "a non-empty list of GPU indices"))
        list.push_back(static_cast<std::int32_t>(index.integer(IntRange::between(0, max_index))));
    } else {
      one_node.push_back(static_cast<std::int32_t>(entry.integer(IntRange::between(0, max_index))));
    }
  }
  if (!per_node && !one_node.empty()) nodes.push_back(std::move(one_node));
  return nodes;
}

// The evaluation keys (HugeCTR's; also checked as accepted keys by hugectr_names.cpp).
Evaluation parse_evaluation(const ObjectReader& r) {
  Evaluation e;
  e.interval = r.integer_or("eval_interval", 0, IntRange::at_least(1));
  // HugeCTR's later parser reads max_eval_batches (and refuses eval_batches, its 2.x name): with
  // both, max_eval_batches counts.
  const char* batches = r.has("max_eval_batches") ? "max_eval_batches" : "eval_batches";
  if (e.interval > 0 && !r.has(batches))
    r.required("eval_batches", "the number of evaluation batches (or max_eval_batches), with eval_interval");
  e.batches = r.integer_or(batches, 0, IntRange::at_least(1));
  e.batchsize = r.integer_or("batchsize_eval", 0, IntRange::at_least(1));
  if (const auto metrics = r.optional("eval_metrics")) {
    e.auc = false;
    for (const auto& metric : metrics->array(0, "a list of metrics")) {
      const std::string text = metric.string();  // its form is checked with the accepted keys
      if (text == "AverageLoss") e.average_loss = true;
      if (!text.starts_with("AUC")) continue;
      e.auc = true;
      // HugeCTR's "AUC" alone sets the threshold 1.0, which only a perfect model reaches: none here.
      if (text.size() > 4) e.auc_threshold = std::stod(text.substr(4));
      if (e.auc_threshold >= 1.0) e.auc_threshold = 0.0;
    }
  }
  return e;
}

IncrementalDump parse_incremental_dump(const ObjectReader& r) {
  r.only_keys({"interval", "directory", "mode"});
  IncrementalDump d;
  d.interval = r.integer("interval", IntRange::at_least(1));
  d.directory = r.name("directory");
  d.background = r.one_of_or("mode", "blocking", {"blocking", "background"}) == "background";
  return d;
}

Checkpoint parse_checkpoint(const ObjectReader& r) {
  r.only_keys({"directory", "interval", "on_stop", "keep", "resume_from"});
  Checkpoint c;
  if (r.has("directory")) c.directory = r.name("directory");
  else if (!r.has("resume_from"))
    r.required("directory", "where the checkpoints go (or resume_from alone, to resume without saving)");
  c.interval = r.integer_or("interval", 0, IntRange::at_least(0));
  if (const auto on_stop = r.optional("on_stop")) c.on_stop = on_stop->boolean();
  c.keep = r.integer_or("keep", 0, IntRange::at_least(0));
  if (r.has("resume_from")) c.resume_from = r.name("resume_from");
  return c;
}

}  // namespace

Solver parse_solver(const ObjectReader& r) {
  std::vector<std::string> keys = {"batchsize",       "batchsize_per_rank",
                                   "max_iter",        "warmup_iter",
                                   "display",         "seed",
                                   "input_key_type",  "device",
                                   "communicator",    "gpu",
                                   "non_finite_loss", "incremental_dump",
                                   "checkpoint"};
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
  s.stop_on_non_finite_loss = r.one_of_or("non_finite_loss", "stop", {"stop", "continue"}) == "stop";
  if (r.has("input_key_type")) s.input_key_type = r.one_of("input_key_type", {"I32", "I64"});  // HugeCTR's
  if (r.has("device")) s.device = r.one_of("device", {"host", "gpu"}) == "gpu" ? Device::kGpu : Device::kHost;
  if (r.has("communicator"))
    s.communicator =
        r.one_of("communicator", {"nccl", "mpi"}) == "mpi" ? DeviceExchange::kStagedMpi : DeviceExchange::kNccl;
  if (const auto gpu = r.optional("gpu")) s.gpus = parse_gpu_lists(*gpu);
  if (r.has("incremental_dump")) s.incremental_dump = parse_incremental_dump(r.object("incremental_dump"));
  if (r.has("checkpoint")) s.checkpoint = parse_checkpoint(r.object("checkpoint"));
  hugectr::check_unused_keys(r, hugectr::UnusedIn::kSolver);
  s.evaluation = parse_evaluation(r);
  return s;
}

}  // namespace embscale::config
