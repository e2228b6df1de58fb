// What a training run puts into its report: the run's parameters, its per-rank measurements and
// its row of the /summary table (results/schema.md lists the columns).
#pragma once

#include <string>

#include "config/config.hpp"
#include "plan/planner.hpp"
#include "report/metadata.hpp"
#include "report/summary.hpp"
#include "report/writer.hpp"
#include "run/gpu_rank.hpp"
#include "run/run_devices.hpp"
#include "run/training_run.hpp"

namespace embscale::cli {

std::vector<report::SummaryField> run_parameters(const config::Config& config, int ranks);
// `plan`: the sharding plan the run used (plan::plan_for_run), recorded as the attribute
// sharding_plan and the table plan/loads; null: none.
report::RunRecord make_run_record(const std::string& id, const config::Config& config, int ranks,
                                  const run::TrainingRun& run, const plan::ShardingPlan* plan);
// The run's /summary row: its parameters, its figures, then the eviction study's (when the config
// has an eviction section).
report::SummaryRow make_summary_row(const std::string& id, const config::Config& config, int ranks,
                                    const run::TrainingRun& run);

// A GPU run's report attributes (results/schema.md): gpu_model, gpu_memory_bytes, cuda_version
// (the runtime the GPU library was built with), cuda_driver_version, and with NCCL nccl_version;
// rank 0's, broadcast (the writer requires identical attributes on every rank). Collective.
void record_gpu(comm::Communicator& world, const run::GpuRank& gpu, report::RunMetadata& metadata);
// record_gpu for a GPU run of `config`, and its comm_backend (`nccl`, or `mpi (staged)`).
void record_gpu_run(comm::Communicator& world, const run::RunDevices& devices, const config::Config& config,
                    report::RunMetadata& metadata);

}  // namespace embscale::cli
