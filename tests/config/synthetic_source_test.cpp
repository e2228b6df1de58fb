// The Data layer's synthetic block (lib/config/synthetic_source.cpp): per-slot workloads, their
// defaults and overrides, and the errors that name the field and say what was expected.
#include "config/synthetic_source.hpp"

#include <gtest/gtest.h>

#include "tests/config/config_test_support.hpp"

namespace embscale::config {
namespace {

using testing::default_json;
using testing::error_of;
using testing::layer;

Config with_synthetic(const nlohmann::json& synthetic) {
  auto j = default_json();
  layer(j, "data")["synthetic"] = synthetic;
  return parse_config(j, "test.json");
}

std::string synthetic_error(const nlohmann::json& synthetic) {
  auto j = default_json();
  layer(j, "data")["synthetic"] = synthetic;
  return error_of(j);
}

TEST(SyntheticSource, EveryFieldParsed) {
  const Config c = with_synthetic(nlohmann::json::parse(R"({
    "key_distribution": "mixture",
    "mixture": [{"weight": 2, "key_distribution": "zipf", "zipf_alpha": 1.3},
                {"weight": 1, "key_distribution": "hotspot", "hot_key_fraction": 0.05, "hot_access_fraction": 0.95}],
    "drift": {"period": 50, "mode": "gradual", "shift": 0.25},
    "growth": {"keys_per_iteration": 100, "initial_keys": 5000, "hot": "newest"},
    "key_mapping": "permutation",
    "nnz_per_slot": 6, "nnz_min": 2, "nnz_distribution": "uniform",
    "bag_keys": "dedup"})"));
  ASSERT_EQ(c.data.synthetic.slots.size(), 8u);
  EXPECT_EQ(c.data.synthetic.batch_cycle, 0);
  for (const auto& w : c.data.synthetic.slots) {
    EXPECT_EQ(w.keys.distribution, KeyDistribution::kMixture);
    ASSERT_EQ(w.keys.mixture.size(), 2u);
    EXPECT_EQ(w.keys.mixture[0].weight, 2.0);
    EXPECT_EQ(w.keys.mixture[0].keys.zipf_alpha, 1.3);
    EXPECT_EQ(w.keys.mixture[1].keys.distribution, KeyDistribution::kHotspot);
    EXPECT_EQ(w.keys.mixture[1].keys.hot_key_fraction, 0.05);
    EXPECT_EQ(w.drift.period, 50);
    EXPECT_EQ(w.drift.mode, DriftMode::kGradual);
    EXPECT_EQ(w.drift.shift, 0.25);
    EXPECT_EQ(w.growth.keys_per_iteration, 100);
    EXPECT_EQ(w.growth.initial_keys, 5000);
    EXPECT_EQ(w.growth.hot, GrowthOrder::kNewestHot);
    EXPECT_EQ(w.mapping, KeyMapping::kPermutation);
    EXPECT_EQ(w.nnz, 6);
    EXPECT_EQ(w.nnz_min, 2);
    EXPECT_EQ(w.nnz_distribution, NnzDistribution::kUniform);
    EXPECT_EQ(w.bag_keys, BagKeys::kDedup);
  }
}

TEST(SyntheticSource, MultiHotAndBatchCycle) {
  const Config c = with_synthetic(nlohmann::json::parse(R"({
    "multi_hot": {"companions": "pareto", "pareto_alpha": 0.3}, "nnz_per_slot": 3, "batch_cycle": 10})"));
  EXPECT_EQ(c.data.synthetic.batch_cycle, 10);
  for (const auto& w : c.data.synthetic.slots) {
    EXPECT_EQ(w.multi_hot.companions, Companions::kPareto);
    EXPECT_EQ(w.multi_hot.pareto_alpha, 0.3);
  }
}

TEST(SyntheticSource, PerSlotOverridesAndAnNnzArray) {
  const Config c = with_synthetic(nlohmann::json::parse(R"({
    "key_distribution": "zipf", "zipf_alpha": 1.1,
    "nnz_per_slot": [1, 2, 3, 4, 5, 6, 7, 8],
    "per_slot": {"2": {"key_distribution": "hugectr_power_law", "power_law": "short"},
                 "7": {"zipf_alpha": 0.8, "drift": {"period": 3}}}})"));
  const auto& slots = c.data.synthetic.slots;
  for (std::size_t j = 0; j < 8; ++j) EXPECT_EQ(slots[j].nnz, static_cast<std::int64_t>(j) + 1);
  EXPECT_EQ(slots[0].keys.distribution, KeyDistribution::kZipf);
  EXPECT_EQ(slots[2].keys.distribution, KeyDistribution::kHugeCtrPowerLaw);
  EXPECT_EQ(slots[2].keys.power_law, HugeCtrPowerLaw::kShort);
  EXPECT_EQ(slots[7].keys.distribution, KeyDistribution::kZipf);  // inherited from the block
  EXPECT_EQ(slots[7].keys.zipf_alpha, 0.8);
  EXPECT_EQ(slots[7].drift.period, 3);
  EXPECT_EQ(slots[7].drift.shift, 0.1);  // the default, not overridden
  EXPECT_EQ(slots[6].drift.period, 0);
}

TEST(SyntheticSource, HugeCtrMaxNnzChecksTakeTheLargestSlot) {
  auto j = default_json();
  layer(j, "data")["synthetic"] = {{"nnz_per_slot", {1, 1, 1, 9, 1, 1, 1, 1}}};
  layer(j, "data")["sparse"][0]["max_nnz"] = 8;
  EXPECT_EQ(error_of(j),
            "test.json: layers[data].sparse[0].max_nnz: expected an integer >= 9 (synthetic bags hold "
            "up to nnz_per_slot keys), got 8");
}

TEST(SyntheticSource, ErrorsNameTheFieldAndWhatWasExpected) {
  const std::string at = "test.json: layers[data].synthetic";
  EXPECT_EQ(synthetic_error({{"per_slot", {{"8", {{"zipf_alpha", 1.0}}}}}}),
            at + ".per_slot.8: the key \"8\" is not a slot index in [0, 7] (the slots of slot_size_array)");
  EXPECT_EQ(synthetic_error({{"per_slot", {{"x", {{"zipf_alpha", 1.0}}}}}}),
            at + ".per_slot.x: the key \"x\" is not a slot index in [0, 7] (the slots of slot_size_array)");
  EXPECT_EQ(synthetic_error({{"per_slot", {{"1", {{"zipf_alph", 1.0}}}}}}),
            at + ".per_slot.1.zipf_alph: unknown key; did you mean \"zipf_alpha\"?");
  EXPECT_EQ(synthetic_error({{"nnz_per_slot", {1, 2}}}),
            at + ".nnz_per_slot: expected an array of 8 integers in [1, 1048576] (one per slot), got [1,2]");
  EXPECT_EQ(synthetic_error({{"key_distribution", "mixture"}}),
            at + ".mixture: required key is missing; expected an array of components for \"key_distribution\": "
                 "\"mixture\"");
  EXPECT_EQ(synthetic_error(
                {{"key_distribution", "mixture"}, {"mixture", {{{"weight", 1}, {"key_distribution", "mixture"}}}}}),
            at + ".mixture[0].key_distribution: expected a distribution other than \"mixture\" (a component cannot "
                 "itself be a mixture), got \"mixture\"");
  EXPECT_EQ(synthetic_error({{"key_distribution", "mixture"}, {"mixture", {{{"weight", 0}}}}}),
            at + ".mixture[0].weight: expected a number > 0, got 0");
  EXPECT_EQ(synthetic_error({{"drift", {{"period", 5}, {"shift", 1.0}}}}),
            at + ".drift.shift: expected a number in (0, 1) (a shift of 1 turns the keys a full circle), got 1.0");
  EXPECT_EQ(synthetic_error({{"drift", {{"mode", "sudden"}}}}),
            at + ".drift.mode: expected \"abrupt\" or \"gradual\", got \"sudden\"");
  EXPECT_EQ(
      synthetic_error({{"key_distribution", "hugectr_power_law"}, {"power_law", "specific"}, {"zipf_alpha", 1.0}}),
      at + ".zipf_alpha: hugectr_power_law \"specific\" takes its exponent from zipf_alpha, which must be > 0 "
           "and differ from 1 by 1e-6 or more (HugeCTR divides by 1 - alpha), got 1.000000");
  EXPECT_EQ(synthetic_error({{"nnz_per_slot", 3}, {"nnz_min", 4}, {"nnz_distribution", "uniform"}}),
            at + ": slot 0: nnz_min (4) must not exceed nnz_per_slot (3)");
  EXPECT_EQ(synthetic_error({{"nnz_min", 0}}),
            at + ": slot 0: nnz_min applies to nnz_distribution \"uniform\" only, the slot's is \"fixed\"");
  EXPECT_EQ(synthetic_error({{"bag_keys", "distinct"}, {"multi_hot", {{"companions", "uniform"}}}}),
            at + ": slot 0: multi_hot companions are a fixed function of the bag's first key (MLPerf's lookup "
                 "table), they cannot be redrawn: bag_keys \"distinct\" does not combine with them");
  auto j = default_json();
  layer(j, "data")["slot_size_array"][3] = 3;
  layer(j, "data")["synthetic"] = {{"bag_keys", "distinct"}, {"nnz_per_slot", 4}};
  EXPECT_EQ(error_of(j), at + ": slot 3: bag_keys \"distinct\" needs at most as many keys per bag as the slot has "
                              "(3), its nnz_per_slot is 4");
  EXPECT_EQ(synthetic_error({{"batch_cycle", -1}}), at + ".batch_cycle: expected an integer >= 0, got -1");
  EXPECT_EQ(synthetic_error({{"batch_cycle", 5}, {"per_slot", {{"6", {{"drift", {{"period", 10}}}}}}}}),
            at + ".batch_cycle: replays batch_cycle batches, which freezes slot 6's drift or growth at their first "
                 "batch_cycle iterations; use one or the other");
  EXPECT_EQ(synthetic_error({{"per_slot", {{"0", {{"nnz_per_slot", {7}}}}}}}),
            at + ".per_slot.0.nnz_per_slot: expected an integer in [1, 1048576], got [7]");
  EXPECT_EQ(synthetic_error({{"multi_hot", {{"companions", "uniform"}}}, {"growth", {{"keys_per_iteration", 10}}}}),
            at + ": slot 0: multi_hot companions are drawn over the whole key space (MLPerf's table), growth limits "
                 "keys to the ids that exist: the two do not combine");
  EXPECT_EQ(synthetic_error({{"multi_hot", {{"companions", "pareto"}, {"pareto_alpha", 0.01}}}}),
            at + ".multi_hot.pareto_alpha: expected a number in [0.06, 100], got 0.01");
  EXPECT_EQ(synthetic_error({{"power_law", "specific"},
                             {"zipf_alpha", 1.0},
                             {"per_slot", {{"0", {{"key_distribution", "hugectr_power_law"}}}}}}),
            at + ".per_slot.0: hugectr_power_law \"specific\" takes its exponent from zipf_alpha, which must be > 0 "
                 "and differ from 1 by 1e-6 or more (HugeCTR divides by 1 - alpha), got 1.000000 (inherited from the "
                 "synthetic block)");
}

}  // namespace
}  // namespace embscale::config

namespace embscale::config {
namespace {

TEST(SyntheticSource, LabelModels) {
  EXPECT_FALSE(with_synthetic({{"zipf_alpha", 1.1}}).data.synthetic.planted_labels);
  EXPECT_FALSE(with_synthetic({{"labels", {{"model", "first_key"}}}}).data.synthetic.planted_labels);
  const auto planted = with_synthetic({{"labels", {{"model", "planted"}, {"key_scale", 3}, {"bias", -1.5}}}})
                           .data.synthetic.planted_labels;
  ASSERT_TRUE(planted);
  EXPECT_EQ(planted->key_scale, 3.0);
  EXPECT_EQ(planted->dense_scale, 1.0);
  EXPECT_EQ(planted->bias, -1.5);
  EXPECT_FALSE(planted->seed);
  EXPECT_EQ(with_synthetic({{"labels", {{"model", "planted"}, {"seed", 42}}}}).data.synthetic.planted_labels->seed,
            42u);
  const std::string at = "test.json: layers[data].synthetic.labels";
  EXPECT_EQ(synthetic_error({{"labels", {{"model", "logistic"}}}}),
            at + ".model: expected \"first_key\" or \"planted\", got \"logistic\"");
  EXPECT_EQ(synthetic_error({{"labels", {{"model", "first_key"}, {"bias", 1}}}}),
            at + ".bias: unknown key; known keys: \"model\"");
  EXPECT_EQ(synthetic_error({{"labels", {{"model", "planted"}, {"key_scale", -1}}}}),
            at + ".key_scale: expected a number in [0, 100], got -1");
}

}  // namespace
}  // namespace embscale::config
