#include "bench/cli/run_report.hpp"

namespace embscale::cli {

std::vector<report::SummaryField> run_parameters(const config::Config& config, int ranks) {
  const auto& emb = config.embeddings.front();
  const auto& syn = config.data.synthetic;
  return {
      {"scheme", std::string(emb.type)},
      {"ranks", std::int64_t{ranks}},
      {"batchsize", config.solver.batchsize},
      {"embedding_vec_size", std::int64_t{emb.embedding_vec_size}},
      {"combiner", config::to_string(emb.combiner)},
      {"slots", std::int64_t{config.data.slot_num}},
      {"nnz_per_slot", syn.nnz_per_slot},
      {"key_distribution", config::to_string(syn.distribution)},
      {"zipf_alpha", syn.distribution == config::KeyDistribution::kZipf ? syn.zipf_alpha : 0.0},
      {"iterations", config.solver.max_iter},
  };
}

report::RunRecord make_run_record(const std::string& id, const config::Config& config, int ranks,
                                  const embedding::TrainingRun& run) {
  report::RunRecord record;
  record.id = id;
  record.parameters = run_parameters(config, ranks);
  record.phase_names = run.measurements.phase_names;
  record.timings = run.measurements.timings;
  record.counters = run.measurements.counters;
  record.series["step_time"] = run.measurements.step_time;
  record.series["loss"] = run.measurements.loss;
  return record;
}

report::SummaryRow make_summary_row(const std::string& id, const config::Config& config, int ranks,
                                    const embedding::RunSummary& s) {
  report::SummaryRow row{{"run_id", id}};
  for (auto& field : run_parameters(config, ranks)) row.push_back(std::move(field));
  const report::SummaryRow figures{
      {"step_time_median_s", s.step_time_median_s},
      {"step_time_p95_s", s.step_time_p95_s},
      {"throughput_samples_per_s", s.throughput_samples_per_s},
      {"throughput_keys_per_s", s.throughput_keys_per_s},
      {"bytes_sent_per_step", s.bytes_sent_per_step},
      {"load_imbalance", s.load_imbalance},
      {"final_loss", s.final_loss},
  };
  row.insert(row.end(), figures.begin(), figures.end());
  return row;
}

}  // namespace embscale::cli
