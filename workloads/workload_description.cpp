#include "workloads/workload_description.hpp"

#include <sstream>

namespace embscale::workloads {
namespace {

std::string percent(double fraction) {
  std::ostringstream out;
  out << fraction * 100.0 << '%';
  return out.str();
}

std::string describe_keys(const config::KeySpec& k) {
  using config::KeyDistribution;
  std::ostringstream out;
  out << config::to_string(k.distribution);
  switch (k.distribution) {
    case KeyDistribution::kZipf:
    case KeyDistribution::kFbgemmZipf: out << ' ' << k.zipf_alpha; break;
    case KeyDistribution::kHotspot:
      out << " (" << percent(k.hot_access_fraction) << " of draws on " << percent(k.hot_key_fraction) << " of keys)";
      break;
    case KeyDistribution::kHugeCtrPowerLaw:
      out << ' ' << config::to_string(k.power_law);
      if (k.power_law == config::HugeCtrPowerLaw::kSpecific) out << ' ' << k.zipf_alpha;
      break;
    case KeyDistribution::kMixture: {
      double total = 0.0;
      for (const auto& c : k.mixture) total += c.weight;
      out << " of";
      const char* separator = " ";
      for (const auto& c : k.mixture) {
        out << separator << percent(c.weight / total) << ' ' << describe_keys(c.keys);
        separator = ", ";
      }
      break;
    }
    case KeyDistribution::kUniform:
    case KeyDistribution::kDlrmUniform:
    case KeyDistribution::kTorchrecUniform: break;
  }
  return out.str();
}

}  // namespace

std::string describe_slot_workload(const config::SlotWorkload& w) {
  std::ostringstream out;
  out << describe_keys(w.keys);
  if (w.growth.keys_per_iteration > 0)
    out << ", ids growing from " << w.growth.initial_keys << " by " << w.growth.keys_per_iteration << " per iteration ("
        << config::to_string(w.growth.hot) << " hottest)";
  if (w.drift.period > 0)
    out << ", hot set moving " << percent(w.drift.shift) << " of the keys every " << w.drift.period << " iterations ("
        << config::to_string(w.drift.mode) << ')';
  if (w.multi_hot.companions == config::Companions::kUniform) out << ", multi-hot with uniform companions";
  if (w.multi_hot.companions == config::Companions::kPareto)
    out << ", multi-hot with Pareto " << w.multi_hot.pareto_alpha << " companions";
  if (w.mapping == config::KeyMapping::kPermutation) out << ", permuted keys";
  if (w.nnz_distribution == config::NnzDistribution::kFixed)
    out << ", " << w.nnz << (w.nnz == 1 ? " key" : " keys") << " per bag";
  else
    out << ", " << (w.nnz_distribution == config::NnzDistribution::kUniform ? w.nnz_min : 1) << '-' << w.nnz
        << " keys per bag (" << config::to_string(w.nnz_distribution) << ')';
  if (w.bag_keys == config::BagKeys::kDedup) out << ", repeats removed";
  if (w.bag_keys == config::BagKeys::kDistinct) out << ", distinct keys";
  return out.str();
}

void print_synthetic_slots(std::ostream& out, const config::DataLayer& data) {
  const auto& slots = data.synthetic.slots;
  for (std::size_t first = 0; first < slots.size();) {
    const std::string description = describe_slot_workload(slots[first]);
    std::size_t last = first;
    while (last + 1 < slots.size() && describe_slot_workload(slots[last + 1]) == description) ++last;
    out << "  "
        << (first == last ? "slot " + std::to_string(first)
                          : "slots " + std::to_string(first) + "-" + std::to_string(last))
        << ": " << description << '\n';
    first = last + 1;
  }
}

}  // namespace embscale::workloads
