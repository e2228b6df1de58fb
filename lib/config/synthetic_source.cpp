// The Data layer's `synthetic` block: every slot's key distribution, drift, growth, key mapping,
// bag sizes and repeated-key policy (lib/config/README.md, "The synthetic block").
#include "config/synthetic_source.hpp"

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "config/sections.hpp"
#include "core/error.hpp"

namespace embscale::config {
namespace {

template <typename Enum, std::size_t N> using NameTable = std::array<std::pair<Enum, const char*>, N>;

constexpr NameTable<KeyDistribution, 8> kKeyDistributionNames{{
    {KeyDistribution::kUniform, "uniform"},
    {KeyDistribution::kZipf, "zipf"},
    {KeyDistribution::kHotspot, "hotspot"},
    {KeyDistribution::kMixture, "mixture"},
    {KeyDistribution::kHugeCtrPowerLaw, "hugectr_power_law"},
    {KeyDistribution::kFbgemmZipf, "fbgemm_zipf"},
    {KeyDistribution::kDlrmUniform, "dlrm_uniform"},
    {KeyDistribution::kTorchrecUniform, "torchrec_uniform"},
}};
constexpr NameTable<HugeCtrPowerLaw, 4> kPowerLawNames{{{HugeCtrPowerLaw::kLong, "long"},
                                                        {HugeCtrPowerLaw::kMedium, "medium"},
                                                        {HugeCtrPowerLaw::kShort, "short"},
                                                        {HugeCtrPowerLaw::kSpecific, "specific"}}};
constexpr NameTable<Companions, 3> kCompanionNames{
    {{Companions::kNone, "none"}, {Companions::kUniform, "uniform"}, {Companions::kPareto, "pareto"}}};
constexpr NameTable<DriftMode, 2> kDriftModeNames{{{DriftMode::kAbrupt, "abrupt"}, {DriftMode::kGradual, "gradual"}}};
constexpr NameTable<GrowthOrder, 2> kGrowthOrderNames{
    {{GrowthOrder::kOldestHot, "oldest"}, {GrowthOrder::kNewestHot, "newest"}}};
constexpr NameTable<KeyMapping, 2> kKeyMappingNames{
    {{KeyMapping::kIdentity, "identity"}, {KeyMapping::kPermutation, "permutation"}}};
constexpr NameTable<NnzDistribution, 3> kNnzDistributionNames{
    {{NnzDistribution::kFixed, "fixed"}, {NnzDistribution::kUniform, "uniform"}, {NnzDistribution::kDlrm, "dlrm"}}};
constexpr NameTable<BagKeys, 3> kBagKeysNames{
    {{BagKeys::kAny, "any"}, {BagKeys::kDedup, "dedup"}, {BagKeys::kDistinct, "distinct"}}};

template <typename Enum, std::size_t N> std::string name_of(const NameTable<Enum, N>& table, Enum value) {
  for (const auto& [v, name] : table)
    if (v == value) return name;
  return "?";
}

template <typename Enum, std::size_t N> std::vector<std::string> names_of(const NameTable<Enum, N>& table) {
  std::vector<std::string> names;
  for (const auto& entry : table) names.emplace_back(entry.second);
  return names;
}

// The enum named by `key`, or `fallback` when the key is absent.
template <typename Enum, std::size_t N>
Enum enum_or(const ObjectReader& r, std::string_view key, Enum fallback, const NameTable<Enum, N>& table) {
  const std::string name = r.one_of_or(key, name_of(table, fallback), names_of(table));
  for (const auto& [v, n] : table)
    if (name == n) return v;
  return fallback;  // unreachable: one_of_or accepted only the table's names
}

constexpr double kMaxZipfAlpha = 100.0;
constexpr double kMaxParetoAlpha = 100.0;
// Keys per bag: far from overflow of samples x slots x nnz, beyond any real model.
constexpr std::int64_t kMaxNnz = std::int64_t{1} << 20;
constexpr std::int64_t kMaxDriftPeriod = std::int64_t{1} << 40;

const std::vector<std::string> kKeySpecFields = {"key_distribution",    "zipf_alpha", "hot_key_fraction",
                                                 "hot_access_fraction", "power_law",  "mixture"};
// HugeCTR refuses a Specific exponent within this distance of 1 (its inverse cdf divides by 1 - a).
constexpr double kHugeCtrMinDistanceFromOne = 1e-6;

void parse_key_spec(const ObjectReader& r, KeySpec& k, bool inside_mixture);

void parse_mixture(const ValueReader& value, KeySpec& k) {
  constexpr auto expected = "a non-empty array of {\"weight\": number > 0, \"key_distribution\": ..., parameters}";
  k.mixture.clear();
  for (const auto& element : value.array(1, expected)) {
    const auto component = element.object();
    std::vector<std::string> known = kKeySpecFields;
    known.emplace_back("weight");
    component.only_keys(known);
    MixtureComponent c;
    c.weight = component.number("weight", NumberRange::above(0.0));
    parse_key_spec(component, c.keys, true);
    k.mixture.push_back(std::move(c));
  }
}

// Fields absent from `r` keep the value `k` already has (the block's, for a per_slot override).
void parse_key_spec(const ObjectReader& r, KeySpec& k, bool inside_mixture) {
  const auto distribution_field = r.optional("key_distribution");
  k.distribution = enum_or(r, "key_distribution", k.distribution, kKeyDistributionNames);
  if (inside_mixture && distribution_field && k.distribution == KeyDistribution::kMixture)
    distribution_field->fail("a distribution other than \"mixture\" (a component cannot itself be a mixture)");
  k.zipf_alpha = r.number_or("zipf_alpha", k.zipf_alpha, NumberRange::between(0.0, kMaxZipfAlpha));
  k.hot_key_fraction = r.number_or("hot_key_fraction", k.hot_key_fraction, {0.0, 1.0, true});
  k.hot_access_fraction = r.number_or("hot_access_fraction", k.hot_access_fraction, NumberRange::between(0.0, 1.0));
  k.power_law = enum_or(r, "power_law", k.power_law, kPowerLawNames);
  if (k.distribution == KeyDistribution::kHugeCtrPowerLaw && k.power_law == HugeCtrPowerLaw::kSpecific &&
      (k.zipf_alpha <= 0.0 || std::abs(k.zipf_alpha - 1.0) < kHugeCtrMinDistanceFromOne)) {
    const std::string why =
        "hugectr_power_law \"specific\" takes its exponent from zipf_alpha, which must be > 0 and "
        "differ from 1 by 1e-6 or more (HugeCTR divides by 1 - alpha), got " +
        std::to_string(k.zipf_alpha);
    if (const auto alpha = r.optional("zipf_alpha")) alpha->fail_with(why);
    throw InputError(r.origin() + ": " + r.path() + ": " + why + " (inherited from the synthetic block)");
  }
  if (const auto mixture = r.optional("mixture")) {
    if (inside_mixture) mixture->fail_with("a mixture's component cannot hold a mixture");
    parse_mixture(*mixture, k);
  }
  if (k.distribution == KeyDistribution::kMixture && k.mixture.empty())
    r.required("mixture", "an array of components for \"key_distribution\": \"mixture\"");
}

void parse_drift(const ObjectReader& r, DriftSpec& d) {
  const auto block = r.optional("drift");
  if (!block) return;
  const auto drift = block->object();
  drift.only_keys({"period", "mode", "shift"});
  d.period = drift.integer_or("period", d.period, IntRange::between(0, kMaxDriftPeriod));
  d.mode = enum_or(drift, "mode", d.mode, kDriftModeNames);
  d.shift = drift.number_or("shift", d.shift, {0.0, 1.0, true});
  if (d.shift == 1.0)
    drift.required("shift", "").fail("a number in (0, 1) (a shift of 1 turns the keys a full circle)");
}

void parse_growth(const ObjectReader& r, GrowthSpec& g) {
  const auto block = r.optional("growth");
  if (!block) return;
  const auto growth = block->object();
  growth.only_keys({"keys_per_iteration", "initial_keys", "hot"});
  g.keys_per_iteration = growth.integer_or("keys_per_iteration", g.keys_per_iteration, IntRange::at_least(0));
  g.initial_keys = growth.integer_or("initial_keys", g.initial_keys, IntRange::at_least(1));
  g.hot = enum_or(growth, "hot", g.hot, kGrowthOrderNames);
}

void parse_multi_hot(const ObjectReader& r, MultiHotSpec& m) {
  const auto block = r.optional("multi_hot");
  if (!block) return;
  const auto multi_hot = block->object();
  multi_hot.only_keys({"companions", "pareto_alpha"});
  m.companions = enum_or(multi_hot, "companions", m.companions, kCompanionNames);
  m.pareto_alpha =
      multi_hot.number_or("pareto_alpha", m.pareto_alpha, NumberRange::between(kMinParetoAlpha, kMaxParetoAlpha));
}

std::vector<std::string> slot_workload_fields() {
  std::vector<std::string> fields = kKeySpecFields;
  for (const char* f :
       {"drift", "growth", "multi_hot", "key_mapping", "nnz_per_slot", "nnz_min", "nnz_distribution", "bag_keys"})
    fields.emplace_back(f);
  return fields;
}

// The fields of one slot's workload; "nnz_per_slot" as an integer (the block's array form is read
// by the caller; in a per_slot entry an array is an error).
void parse_slot_workload(const ObjectReader& r, SlotWorkload& w, bool per_slot_entry) {
  parse_key_spec(r, w.keys, false);
  parse_drift(r, w.drift);
  parse_growth(r, w.growth);
  parse_multi_hot(r, w.multi_hot);
  w.mapping = enum_or(r, "key_mapping", w.mapping, kKeyMappingNames);
  if (const auto nnz = r.optional("nnz_per_slot"); nnz && (per_slot_entry || !nnz->json().is_array()))
    w.nnz = nnz->integer(IntRange::between(1, kMaxNnz));
  w.nnz_min = r.integer_or("nnz_min", w.nnz_min, IntRange::between(0, kMaxNnz));
  w.nnz_distribution = enum_or(r, "nnz_distribution", w.nnz_distribution, kNnzDistributionNames);
  w.bag_keys = enum_or(r, "bag_keys", w.bag_keys, kBagKeysNames);
}

// "per_slot": {"<slot index>": {fields}, ...}
void parse_per_slot(const ObjectReader& block, const std::vector<std::int64_t>& slot_sizes,
                    std::vector<SlotWorkload>& slots) {
  const auto per_slot = block.optional("per_slot");
  if (!per_slot) return;
  const auto overrides = per_slot->object();
  const std::string expected_index =
      "a slot index in [0, " + std::to_string(slot_sizes.size() - 1) + "] (the slots of slot_size_array)";
  for (const auto& item : per_slot->json().items()) {
    const std::string& index_text = item.key();
    std::size_t parsed = 0;
    long long index = -1;
    try {
      index = std::stoll(index_text, &parsed);
    } catch (const std::exception&) {
      parsed = 0;
    }
    const auto field = overrides.required(index_text, expected_index);
    if (parsed != index_text.size() || index < 0 || static_cast<std::size_t>(index) >= slot_sizes.size())
      field.fail_with("the key \"" + index_text + "\" is not " + expected_index);
    const auto slot = field.object();
    slot.only_keys(slot_workload_fields());
    parse_slot_workload(slot, slots[static_cast<std::size_t>(index)], true);
  }
}

// Checks that need the slot's key space; `block` is the synthetic block (the message names the
// slot, whose fields may come from the block or from its per_slot entry).
void check_against_slot(const SlotWorkload& w, std::int64_t keys, std::size_t slot, const ValueReader& block) {
  const std::string where = "slot " + std::to_string(slot) + ": ";
  if (w.nnz_min > w.nnz)
    block.fail_with(where + "nnz_min (" + std::to_string(w.nnz_min) + ") must not exceed nnz_per_slot (" +
                    std::to_string(w.nnz) + ")");
  if (w.nnz_min != 1 && w.nnz_distribution != NnzDistribution::kUniform)
    block.fail_with(where + "nnz_min applies to nnz_distribution \"uniform\" only, the slot's is \"" +
                    to_string(w.nnz_distribution) + "\"");
  if (w.multi_hot.companions != Companions::kNone && w.growth.keys_per_iteration > 0)
    block.fail_with(where +
                    "multi_hot companions are drawn over the whole key space (MLPerf's table), growth "
                    "limits keys to the ids that exist: the two do not combine");
  if (w.multi_hot.companions != Companions::kNone && w.bag_keys == BagKeys::kDistinct)
    block.fail_with(where +
                    "multi_hot companions are a fixed function of the bag's first key (MLPerf's lookup "
                    "table), they cannot be redrawn: bag_keys \"distinct\" does not combine with them");
  if (w.bag_keys == BagKeys::kDistinct && w.nnz > keys)
    block.fail_with(where +
                    "bag_keys \"distinct\" needs at most as many keys per bag as "
                    "the slot has (" +
                    std::to_string(keys) + "), its nnz_per_slot is " + std::to_string(w.nnz));
}

// "labels": {"model": "first_key"} or {"model": "planted", "key_scale", "dense_scale", "bias", "seed"}.
std::optional<PlantedLabelModel> parse_label_model(const ObjectReader& labels) {
  const std::string model = labels.one_of("model", {"first_key", "planted"});
  if (model == "first_key") {
    labels.only_keys({"model"});
    return std::nullopt;
  }
  labels.only_keys({"model", "key_scale", "dense_scale", "bias", "seed"});
  PlantedLabelModel planted;
  planted.key_scale = labels.number_or("key_scale", planted.key_scale, NumberRange::between(0.0, 100.0));
  planted.dense_scale = labels.number_or("dense_scale", planted.dense_scale, NumberRange::between(0.0, 100.0));
  planted.bias = labels.number_or("bias", planted.bias, NumberRange::between(-100.0, 100.0));
  if (labels.has("seed")) planted.seed = labels.unsigned_or("seed", 0);
  return planted;
}

}  // namespace

void parse_synthetic(const ObjectReader& data_layer, const std::vector<std::int64_t>& slot_sizes,
                     SyntheticSource& source) {
  SlotWorkload all;
  std::vector<std::int64_t> nnz_array;
  const auto block = data_layer.optional("synthetic");
  std::optional<ObjectReader> synthetic;
  if (block) {
    synthetic.emplace(block->object());
    std::vector<std::string> known = slot_workload_fields();
    known.emplace_back("per_slot");
    known.emplace_back("batch_cycle");
    known.emplace_back("labels");
    synthetic->only_keys(known);
    parse_slot_workload(*synthetic, all, false);
    if (const auto nnz = synthetic->optional("nnz_per_slot"); nnz && nnz->json().is_array()) {
      const std::string expected = "an array of " + std::to_string(slot_sizes.size()) + " integers in [1, " +
                                   std::to_string(kMaxNnz) + "] (one per slot)";
      const auto values = nnz->array(1, expected);
      if (values.size() != slot_sizes.size()) nnz->fail(expected);
      for (const auto& v : values) nnz_array.push_back(v.integer(IntRange::between(1, kMaxNnz)));
    }
  }
  source.slots.assign(slot_sizes.size(), all);
  source.batch_cycle = synthetic ? synthetic->integer_or("batch_cycle", 0, IntRange::at_least(0)) : 0;
  for (std::size_t j = 0; j < nnz_array.size(); ++j) source.slots[j].nnz = nnz_array[j];
  if (!synthetic) return;
  if (synthetic->has("labels")) source.planted_labels = parse_label_model(synthetic->object("labels"));
  parse_per_slot(*synthetic, slot_sizes, source.slots);
  for (std::size_t j = 0; j < slot_sizes.size(); ++j) {
    check_against_slot(source.slots[j], slot_sizes[j], j, *block);
    // A replayed pool of batches has no time axis for the hot set to move along or ids to grow on.
    const auto& w = source.slots[j];
    if (source.batch_cycle > 0 && (w.drift.period > 0 || w.growth.keys_per_iteration > 0))
      synthetic->required("batch_cycle", "")
          .fail_with("replays batch_cycle batches, which freezes slot " + std::to_string(j) +
                     "'s drift or growth at their first batch_cycle iterations; use one or the other");
  }
}

std::string to_string(KeyDistribution d) { return name_of(kKeyDistributionNames, d); }
std::string to_string(HugeCtrPowerLaw p) { return name_of(kPowerLawNames, p); }
std::string to_string(DriftMode m) { return name_of(kDriftModeNames, m); }
std::string to_string(GrowthOrder o) { return name_of(kGrowthOrderNames, o); }
std::string to_string(KeyMapping m) { return name_of(kKeyMappingNames, m); }
std::string to_string(NnzDistribution d) { return name_of(kNnzDistributionNames, d); }
std::string to_string(BagKeys b) { return name_of(kBagKeysNames, b); }
std::string to_string(Companions c) { return name_of(kCompanionNames, c); }

const std::vector<std::string>& key_distribution_names() {
  static const std::vector<std::string> names = names_of(kKeyDistributionNames);
  return names;
}

}  // namespace embscale::config
