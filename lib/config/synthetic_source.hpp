// The `synthetic` block of the Data layer: how each slot's keys, bag sizes and bags are generated
// (workloads/ turns these specs into generators; workloads/README.md explains each distribution
// and which tool it reproduces). Part of config.hpp's public surface.
//
// Every slot has a complete SlotWorkload (the block's fields, then the slot's "per_slot"
// overrides, then its entry of an "nnz_per_slot" array), so a generator never merges anything.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace embscale::config {

// A slot's key distribution over its key space [0, N): index 0 is the hottest key of skewed
// distributions before the key mapping. The names are the JSON's "key_distribution" values.
enum class KeyDistribution {
  kUniform,          // "uniform": every key 1/N
  kZipf,             // "zipf": P(index k) ~ (k + 1)^-zipf_alpha, exact (rejection-inversion)
  kHotspot,          // "hotspot": hot_access_fraction of draws uniform on the first hot_key_fraction of keys
  kMixture,          // "mixture": one of `mixture`'s components, by weight
  kHugeCtrPowerLaw,  // "hugectr_power_law": HugeCTR's data generator, presets long/medium/short/specific
  kFbgemmZipf,       // "fbgemm_zipf": FBGEMM's benchmark requests, numpy's Zipf folded (x - 1) % N
  kDlrmUniform,      // "dlrm_uniform": DLRM's random input, round(u (N - 1))
  kTorchrecUniform,  // "torchrec_uniform": TorchRec's RandomRecDataset, randint(0, N)
};

// HugeCTR's power-law presets (PowerLaw_t: Long 0.9, Medium 1.1, Short 1.3; Specific takes its
// exponent from zipf_alpha, != 1, as HugeCTR's `alpha`).
enum class HugeCtrPowerLaw { kLong, kMedium, kShort, kSpecific };

struct MixtureComponent;

struct KeySpec {
  KeyDistribution distribution = KeyDistribution::kZipf;
  double zipf_alpha = 1.05;          // zipf, fbgemm_zipf (<= 1: uniform keys, as FBGEMM), hugectr specific
  double hot_key_fraction = 0.2;     // hotspot: share of the key space that is hot, in (0, 1]
  double hot_access_fraction = 0.8;  // hotspot: share of draws that go to the hot keys, in [0, 1]
  HugeCtrPowerLaw power_law = HugeCtrPowerLaw::kLong;  // hugectr_power_law
  std::vector<MixtureComponent> mixture;               // mixture: at least one component, none a mixture
};

struct MixtureComponent {
  double weight = 1.0;  // > 0; weights are normalised over the components
  KeySpec keys;
};

// The hot set moves every `period` iterations by `shift` of the key space (a rotation of the
// indices): at once at each period's start (abrupt) or spread evenly over the period (gradual).
enum class DriftMode { kAbrupt, kGradual };
struct DriftSpec {
  std::int64_t period = 0;  // 0: no drift
  DriftMode mode = DriftMode::kAbrupt;
  double shift = 0.1;  // fraction of the key space the hot set moves per period, in (0, 1]
};

// Id growth (Paddle's auto-growing table): at iteration i the ids [0, n_i) exist, n_i =
// min(N, initial_keys + keys_per_iteration * i), and keys are drawn from the distribution over
// them; the oldest or the newest ids are the hot end.
enum class GrowthOrder { kOldestHot, kNewestHot };
struct GrowthSpec {
  std::int64_t keys_per_iteration = 0;  // 0: no growth (all N ids exist from the start)
  std::int64_t initial_keys = 1;        // ids that exist at iteration 0, >= 1 (more than N: all N)
  GrowthOrder hot = GrowthOrder::kOldestHot;
};

// MLPerf DLRMv2's synthetic multi-hot (torchrec_dlrm/multi_hot.py): a bag of nnz keys is its
// first key, drawn from the slot's distribution, followed by nnz - 1 companions that are a fixed
// function of the first key (MLPerf's per-id lookup table), each drawn uniformly or as
// floor(Lomax(pareto_alpha)) mod N. The same first key always brings the same bag.
enum class Companions { kNone, kUniform, kPareto };
struct MultiHotSpec {
  Companions companions = Companions::kNone;  // kNone: every key of a bag drawn independently
  double pareto_alpha = 0.25;                 // the Pareto (Lomax) shape a of kPareto, >= kMinParetoAlpha
};
// Below it, U^(-1/a) overflows a double for the smallest uniform draws (U = 2^-53 needs
// 53 / a < 1024): the Lomax value would be infinite.
inline constexpr double kMinParetoAlpha = 0.06;

// Where a sampled index lands in the slot's key space: identity (index 0 is the slot's first key)
// or a keyed bijection (workloads/key_permutation.hpp) that scatters the hot keys.
enum class KeyMapping { kIdentity, kPermutation };

// Keys per bag: exactly `nnz`, uniform in [nnz_min, nnz] (HugeCTR's Parquet generator and
// TorchRec's RandomRecDataset), or DLRM's round(max(1, u min(N, nnz))).
enum class NnzDistribution { kFixed, kUniform, kDlrm };

// Repeated keys in a bag: kept, removed (the bag shrinks), or redrawn until the bag holds nnz
// distinct keys (FBGEMM's unique indices per bag).
enum class BagKeys { kAny, kDedup, kDistinct };

struct SlotWorkload {
  KeySpec keys;
  DriftSpec drift;
  GrowthSpec growth;
  MultiHotSpec multi_hot;
  KeyMapping mapping = KeyMapping::kIdentity;
  std::int64_t nnz = 1;      // HugeCTR's hotness: keys per (sample, slot) bag, or its maximum
  std::int64_t nnz_min = 1;  // the least keys per bag of NnzDistribution::kUniform, in [0, nnz]
  NnzDistribution nnz_distribution = NnzDistribution::kFixed;
  BagKeys bag_keys = BagKeys::kAny;
};

// The planted label model (workloads/planted_labels.hpp: a hidden logistic model of each sample's
// keys and dense features draws its label), "labels": {"model": "planted", ...}.
struct PlantedLabelModel {
  double key_scale = 2.0;    // the keys' term's weight (its unit-variance sum)
  double dense_scale = 1.0;  // the dense features' term's weight
  double bias = 0.0;         // the logit's offset (negative: fewer clicks)
  // The hidden values' seed. Unset: solver.seed, so a new seed is a new model. Set, the model
  // stays while solver.seed redraws the samples and the initial weights (how a quality gate's
  // repetitions vary a run: scripts/compare-error-rates --quality).
  std::optional<std::uint64_t> seed;
};

struct SyntheticSource {
  std::vector<SlotWorkload> slots;  // one per slot of the Data layer
  // "labels": absent or {"model": "first_key"}: a sample clicks by a hash of its first key, 10 %
  // flipped (embscale's stand-in); {"model": "planted", ...}: the planted model.
  std::optional<PlantedLabelModel> planted_labels;
  // Iteration i generates the batch of iteration i mod batch_cycle: a pool of batch_cycle
  // batches replayed (TorchRec's RandomRecDataset pre-generates 10). 0: every batch new.
  std::int64_t batch_cycle = 0;

  // Every one of `slot_num` slots generated alike (for code that builds a DataLayer itself).
  static SyntheticSource same_for_all(const SlotWorkload& workload, std::int32_t slot_num) {
    SyntheticSource source;
    source.slots.assign(static_cast<std::size_t>(slot_num), workload);
    return source;
  }
};

std::string to_string(KeyDistribution d);
std::string to_string(HugeCtrPowerLaw p);
std::string to_string(DriftMode m);
std::string to_string(GrowthOrder o);
std::string to_string(KeyMapping m);
std::string to_string(NnzDistribution d);
std::string to_string(BagKeys b);
std::string to_string(Companions c);

// The names of every value, as the JSON spells them (in enum order).
const std::vector<std::string>& key_distribution_names();

}  // namespace embscale::config
