#include "bench/cli/run_report.hpp"

#include <algorithm>
#include <string>

namespace embscale::cli {

namespace {

// The summary's one-value view of the slots' workloads: the largest bag size, the distribution
// every slot shares (else "per_slot"), and the Zipf exponent every slot shares (else 0).
struct WorkloadParameters {
  std::int64_t max_nnz = 0;
  std::string key_distribution;
  double zipf_alpha = 0.0;
};

WorkloadParameters workload_parameters(const config::SyntheticSource& syn) {
  WorkloadParameters p;
  const auto& first = syn.slots.front().keys;
  bool same_distribution = true;
  bool same_zipf = first.distribution == config::KeyDistribution::kZipf;
  for (const auto& slot : syn.slots) {
    p.max_nnz = std::max(p.max_nnz, slot.nnz);
    same_distribution = same_distribution && slot.keys.distribution == first.distribution;
    same_zipf = same_zipf && slot.keys.distribution == config::KeyDistribution::kZipf &&
                slot.keys.zipf_alpha == first.zipf_alpha;
  }
  p.key_distribution = same_distribution ? config::to_string(first.distribution) : "per_slot";
  p.zipf_alpha = same_zipf ? first.zipf_alpha : 0.0;
  return p;
}

// A trace's bags are as recorded: the distribution is "trace", the largest bag the configured
// sparse max_nnz (0 when not given).
WorkloadParameters data_parameters(const config::DataLayer& data) {
  if (data.format == config::DataFormat::kSynthetic) return workload_parameters(data.synthetic);
  return {data.max_nnz, "trace", 0.0};
}

}  // namespace

std::vector<report::SummaryField> run_parameters(const config::Config& config, int ranks) {
  const auto& emb = config.embeddings.front();
  const auto workload = data_parameters(config.data);
  return {
      {"scheme", embedding::scheme_names(config)},
      {"ranks", std::int64_t{ranks}},
      {"batchsize", config.solver.batchsize},
      {"embedding_vec_size", std::int64_t{emb.embedding_vec_size}},
      {"combiner", config::to_string(emb.combiner)},
      {"slots", std::int64_t{config.data.slot_num}},
      {"nnz_per_slot", workload.max_nnz},
      {"key_distribution", workload.key_distribution},
      {"zipf_alpha", workload.zipf_alpha},
      {"iterations", config.solver.max_iter},
  };
}

report::RunRecord make_run_record(const std::string& id, const config::Config& config, int ranks,
                                  const embedding::TrainingRun& run) {
  report::RunRecord record;
  record.id = id;
  record.parameters = run_parameters(config, ranks);
  record.phase_names = run.measurements.phase_names;
  record.phase_meanings = run.measurements.phase_meanings;
  record.timings = run.measurements.timings;
  record.counters = run.measurements.counters;
  record.series["step_time"] = run.measurements.step_time;
  record.series["loss"] = run.measurements.loss;
  for (const auto& [name, values] : run.measurements.bandwidth) record.series[name] = values;
  for (const auto& table : run.eviction.tables)
    record.tables["eviction/" + table.name] = report::ReportTable{table.columns, table.values, table.meaning};
  return record;
}

report::SummaryRow make_summary_row(const std::string& id, const config::Config& config, int ranks,
                                    const embedding::TrainingRun& run) {
  const embedding::RunSummary& s = run.summary;
  report::SummaryRow row{{"run_id", id}};
  for (auto& field : run_parameters(config, ranks)) row.push_back(std::move(field));
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
  for (const auto& [name, value] : run.eviction.summary) row.push_back({name, value});
  return row;
}

}  // namespace embscale::cli
