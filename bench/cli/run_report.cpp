#include "bench/cli/run_report.hpp"

#include "plan/plan_report.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "core/statistics.hpp"

#include "config/workload_summary.hpp"
#include "run/parameter_server_run.hpp"

namespace embscale::cli {

namespace {

// The layers' dim as a number where they agree (every single-layer config; a planned layer split
// by scheme), else each layer's, "emb1:16,emb2:32" (merge turns a column of both into strings).
report::SummaryValue embedding_vec_sizes(const config::Config& config) {
  const auto dim = config.embeddings.front().embedding_vec_size;
  if (std::all_of(config.embeddings.begin(), config.embeddings.end(),
                  [dim](const auto& layer) { return layer.embedding_vec_size == dim; }))
    return std::int64_t{dim};
  std::string dims;
  for (const auto& layer : config.embeddings)
    dims += (dims.empty() ? "" : ",") + layer.name + ":" + std::to_string(layer.embedding_vec_size);
  return dims;
}

}  // namespace

std::vector<report::SummaryField> run_parameters(const config::Config& config, int ranks) {
  const auto& emb = config.embeddings.front();
  const auto workload = config::summarize_workload(config.data);
  std::vector<report::SummaryField> parameters = {
      {"scheme", run::scheme_names(config)},
      {"ranks", std::int64_t{ranks}},
      {"batchsize", config.solver.batchsize},
      {"embedding_vec_size", embedding_vec_sizes(config)},
      {"combiner", config::to_string(emb.combiner)},
      {"slots", std::int64_t{config.data.slot_num}},
      {"nnz_per_slot", workload.max_nnz},
      {"key_distribution", workload.key_distribution},
      {"zipf_alpha", workload.zipf_alpha},
      {"iterations", config.solver.max_iter},
  };
  // A parameter-server run's roles and mode (only there: reports of the engine's runs keep their
  // columns, so compare pairs them with older reports).
  if (config::runs_on_parameter_servers(config)) {
    const auto roles = run::check_parameter_server_run(config, ranks);
    const auto& settings = *config.parameter_server;
    parameters.insert(parameters.end(), {{"trainers", std::int64_t{roles.trainers}},
                                         {"servers", std::int64_t{roles.servers}},
                                         {"ps_mode", settings.synchronous ? "synchronous" : "asynchronous"},
                                         {"staleness", settings.staleness},
                                         {"transport", settings.ucx_transport ? "ucx" : "mpi"},
                                         {"storage", config.embeddings.front().storage.dynamic ? "dynamic" : "static"},
                                         {"pulls", settings.one_sided_pulls ? "one_sided" : "messages"}});
  }
  return parameters;
}

namespace {

// The run's parameters with the iterations it ran (fewer than max_iter when an evaluation reached
// its AUC target).
std::vector<report::SummaryField> parameters_of(const config::Config& config, int ranks, const run::TrainingRun& run) {
  auto parameters = run_parameters(config, ranks);
  for (auto& field : parameters)
    if (field.name == "iterations") field.value = run.summary.iterations;
  // A resumed run's iterations start at its checkpoint's (only there: other reports keep their
  // columns).
  if (run.first_iteration > 0) parameters.push_back({"first_iteration", run.first_iteration});
  return parameters;
}

// solver.incremental_dump's dumps, one row each (results/schema.md "online/dumps").
report::ReportTable dumps_table(const run::OnlineDumpResults& online) {
  report::ReportTable table{{"iteration", "entries", "bytes", "copy_s", "write_s", "wait_s", "stall_s"},
                            {},
                            std::string("one incremental dump (solver.incremental_dump, mode ") +
                                (online.background ? "background" : "blocking") +
                                "): the timed iterations before it, the entries and file bytes over ranks and layers, "
                                "the slowest rank's copy into memory, file writing and wait for the previous dump's "
                                "writer, and the slowest rank's stall of training (copy + write when blocking, copy + "
                                "wait in the background), all outside the steps' timings"};
  for (const auto& d : online.dumps)
    table.values.insert(table.values.end(), {static_cast<double>(d.iteration), static_cast<double>(d.entries),
                                             static_cast<double>(d.bytes), d.copy_s, d.write_s, d.wait_s, d.stall_s});
  return table;
}

// solver.checkpoint's saves, one row each (results/schema.md "online/checkpoints").
report::ReportTable checkpoints_table(const std::vector<run::CheckpointRecord>& records) {
  report::ReportTable table{{"iteration", "bytes", "seconds"},
                            {},
                            "one checkpoint (solver.checkpoint): the timed iterations before it, its files' bytes "
                            "over ranks, and the slowest rank's seconds writing them (outside the steps' timings)"};
  for (const auto& r : records)
    table.values.insert(table.values.end(),
                        {static_cast<double>(r.iteration), static_cast<double>(r.bytes), r.seconds});
  return table;
}

// The summary's dump figures: the stall's total and share of the run's time, and (background) how
// much slower the steps a writer overlapped were than the others (medians; NaN without both kinds).
void add_dump_figures(const run::TrainingRun& run, report::SummaryRow& row) {
  const auto& online = run.online;
  double stall = 0;
  for (const auto& d : online.dumps) stall += d.stall_s;
  double steps = 0;
  for (const auto t : run.measurements.step_time) steps += t;
  row.push_back({"dumps", static_cast<std::int64_t>(online.dumps.size())});
  row.push_back({"dump_stall_s", stall});
  row.push_back({"dump_stall_fraction", steps + stall > 0 ? stall / (steps + stall) : 0.0});
  if (!online.background) return;
  std::vector<double> overlapped, clear;
  const auto& step_time = run.measurements.step_time;
  for (std::size_t i = 0; i < step_time.size() && i < online.overlapped.size(); ++i)
    (online.overlapped[i] > 0 ? overlapped : clear).push_back(step_time[i]);
  row.push_back({"dump_overlapped_steps", static_cast<std::int64_t>(overlapped.size())});
  row.push_back({"dump_overlapped_step_ratio", overlapped.empty() || clear.empty()
                                                   ? std::numeric_limits<double>::quiet_NaN()
                                                   : quantile(overlapped, 0.5) / quantile(clear, 0.5)});
}

}  // namespace

report::RunRecord make_run_record(const std::string& id, const config::Config& config, int ranks,
                                  const run::TrainingRun& run, const plan::ShardingPlan* plan) {
  report::RunRecord record;
  record.id = id;
  record.parameters = parameters_of(config, ranks, run);
  record.phase_names = run.measurements.phase_names;
  record.transport = run.transport;
  record.phase_meanings = run.measurements.phase_meanings;
  record.timings = run.measurements.timings;
  record.counters = run.measurements.counters;
  record.series["step_time"] = run.measurements.step_time;
  record.series["loss"] = run.measurements.loss;
  if (!run.measurements.auc.empty()) record.series["auc"] = run.measurements.auc;
  for (const auto& [name, values] : run.measurements.bandwidth) record.series[name] = values;
  for (const auto& table : run.eviction.tables)
    record.tables["eviction/" + table.name] = report::ReportTable{table.columns, table.values, table.meaning};
  if (!run.measurements.evaluations.empty()) {
    report::ReportTable evaluation{{"iteration", "auc", "auc_ceiling", "loss", "samples", "auc_stderr"},
                                   {},
                                   "one evaluation (solver.eval_interval): the timed iterations before it, the AUC "
                                   "of the model's logits over every rank's held-out samples, the planted label "
                                   "model's AUC on them (NaN without it), their mean loss and count, and the AUC's "
                                   "DeLong standard error"};
    for (const auto& e : run.measurements.evaluations)
      evaluation.values.insert(evaluation.values.end(), {static_cast<double>(e.iteration), e.auc, e.auc_ceiling, e.loss,
                                                         static_cast<double>(e.samples), e.auc_stderr});
    record.tables["evaluation/scores"] = std::move(evaluation);
  }
  if (!run.online.dumps.empty()) record.tables["online/dumps"] = dumps_table(run.online);
  if (!run.checkpoints.empty()) record.tables["online/checkpoints"] = checkpoints_table(run.checkpoints);
  if (plan) {
    record.sharding_plan = plan::plan_json(*plan).dump();
    record.tables["plan/loads"] = plan::plan_loads_table(*plan);
  }
  return record;
}

report::SummaryRow make_summary_row(const std::string& id, const config::Config& config, int ranks,
                                    const run::TrainingRun& run) {
  const run::RunSummary& s = run.summary;
  report::SummaryRow row{{"run_id", id}};
  for (auto& field : parameters_of(config, ranks, run)) row.push_back(std::move(field));
  const report::SummaryRow figures{
      {"step_time_median_s", s.step_time_median_s},
      {"step_time_p95_s", s.step_time_p95_s},
      {"throughput_samples_per_s", s.throughput_samples_per_s},
      {"throughput_keys_per_s", s.throughput_keys_per_s},
      {"bytes_sent_per_step", s.bytes_sent_per_step},
      {"load_imbalance", s.load_imbalance},
      {"bytes_imbalance", s.bytes_imbalance},
      {"unique_key_ratio", s.unique_key_ratio},
      {"final_loss", s.final_loss},
  };
  row.insert(row.end(), figures.begin(), figures.end());
  if (!run.measurements.evaluations.empty()) {  // the last evaluation's
    const auto& last = run.measurements.evaluations.back();
    row.push_back({"eval_auc", last.auc});
    row.push_back({"eval_auc_stderr", last.auc_stderr});
    row.push_back({"eval_auc_ceiling", last.auc_ceiling});
    row.push_back({"eval_loss", last.loss});
  }
  for (const auto& [name, value] : run.eviction.summary) row.push_back({name, value});
  if (config.solver.incremental_dump.runs()) add_dump_figures(run, row);
  if (config.solver.checkpoint.saves()) {
    double seconds = 0;
    for (const auto& c : run.checkpoints) seconds += c.seconds;
    row.push_back({"checkpoints", static_cast<std::int64_t>(run.checkpoints.size())});
    row.push_back({"checkpoint_s", seconds});
  }
  return row;
}

namespace {

// "13.0" for CUDA's 13000; "2.28.9" for NCCL's 22809 (2.9 onward: major * 10000 + minor * 100 + patch).
std::string cuda_version_text(int code) { return std::to_string(code / 1000) + "." + std::to_string(code % 1000 / 10); }
std::string nccl_version_text(int code) {
  return std::to_string(code / 10000) + "." + std::to_string(code % 10000 / 100) + "." + std::to_string(code % 100);
}

}  // namespace

void record_gpu(comm::Communicator& world, const run::GpuRank& gpu, report::RunMetadata& metadata) {
  const auto properties = gpu.library().properties(gpu.device());
  const auto versions = gpu.library().versions();
  const auto texts =
      comm::broadcast_strings(world, {properties.name, std::to_string(properties.memory_bytes),
                                      cuda_version_text(versions.runtime), cuda_version_text(versions.driver),
                                      gpu.nccl() ? nccl_version_text(gpu.nccl()->nccl_version()) : "not used"});
  auto& a = metadata.attributes;
  a["gpu_model"] = texts[0];
  a["gpu_memory_bytes"] = static_cast<std::int64_t>(std::stoll(texts[1]));
  a["cuda_version"] = texts[2];
  a["cuda_driver_version"] = texts[3];
  a["nccl_version"] = texts[4];
}

void record_gpu_run(comm::Communicator& world, const run::RunDevices& devices, const config::Config& config,
                    report::RunMetadata& metadata) {
  record_gpu(world, devices.gpu(), metadata);
  metadata.attributes["comm_backend"] =
      config.solver.communicator == config::DeviceExchange::kNccl ? "nccl" : "mpi (staged)";
}

}  // namespace embscale::cli
