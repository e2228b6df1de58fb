#include "config/workload_summary.hpp"

#include <algorithm>

namespace embscale::config {
namespace {

WorkloadSummary summarize_synthetic(const SyntheticSource& syn) {
  WorkloadSummary p;
  const auto& first = syn.slots.front().keys;
  bool same_distribution = true;
  bool same_zipf = first.distribution == KeyDistribution::kZipf;
  for (const auto& slot : syn.slots) {
    p.max_nnz = std::max(p.max_nnz, slot.nnz);
    same_distribution = same_distribution && slot.keys.distribution == first.distribution;
    same_zipf =
        same_zipf && slot.keys.distribution == KeyDistribution::kZipf && slot.keys.zipf_alpha == first.zipf_alpha;
  }
  p.key_distribution = same_distribution ? to_string(first.distribution) : "per_slot";
  p.zipf_alpha = same_zipf ? first.zipf_alpha : 0.0;
  return p;
}

}  // namespace

WorkloadSummary summarize_workload(const DataLayer& data) {
  if (data.format == DataFormat::kSynthetic) return summarize_synthetic(data.synthetic);
  return {data.max_nnz, "trace", 0.0};
}

}  // namespace embscale::config
