// The planted label model (workloads/planted_labels.hpp) in the synthetic generator: its logit
// against the formula computed here from the batch (keys, dense features), its labels calibrated
// (in bins of the model's probability, each bin's click rate within 5 standard errors of its mean
// probability), the same labels whatever the rank split, a held-out stream of other samples under
// the same hidden model, and the ceiling: the model's own logit scores its labels' AUC well above
// 0.5 and above a noisier score's.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model/auc.hpp"
#include "workloads/synthetic.hpp"

namespace embscale::workloads {
namespace {

config::DataLayer planted_data() {
  config::DataLayer d;
  d.name = "data";
  d.format = config::DataFormat::kSynthetic;
  d.slot_size_array = {1000, 50, 20000};
  d.slot_num = 3;
  d.label_dim = 1;
  d.dense_dim = 4;
  d.sparse_top = "data1";
  config::SlotWorkload slot;
  slot.keys.distribution = config::KeyDistribution::kZipf;
  slot.keys.zipf_alpha = 1.05;
  slot.nnz = 2;
  d.synthetic = config::SyntheticSource::same_for_all(slot, d.slot_num);
  d.synthetic.planted_labels = config::PlantedLabelModel{1.5, 1.0, -0.5, std::nullopt};
  return d;
}

TEST(PlantedLabels, LogitFollowsTheFormula) {
  const auto data = planted_data();
  const SyntheticGenerator gen(data, 7, 64);
  const PlantedLabels model(*data.synthetic.planted_labels, 7);
  const Batch b = gen.generate(3, 0, 1);
  for (std::int64_t s = 0; s < b.num_samples; ++s) {
    double keys = 0, dense = 0;
    for (int j = 0; j < 3; ++j) {
      double sum = 0;
      for (const Key k : b.bag(s * 3 + j)) sum += model.key_value(k);
      keys += sum / static_cast<double>(b.bag(s * 3 + j).size());
    }
    for (int d = 0; d < 4; ++d) dense += model.dense_weight(d) * std::sqrt(12.0) * (b.dense[s * 4 + d] - 0.5);
    EXPECT_NEAR(model.logit(b, s), -0.5 + 1.5 * keys / std::sqrt(3.0) + dense / 2.0, 1e-12);
  }
}

TEST(PlantedLabels, LabelsAreCalibratedToTheModelsProbability) {
  const auto data = planted_data();
  const SyntheticGenerator gen(data, 11, 4096);
  const PlantedLabels model(*data.synthetic.planted_labels, 11);
  std::vector<double> p_sum(10, 0), clicks(10, 0), count(10, 0);
  for (int it = 0; it < 10; ++it) {
    const Batch b = gen.generate(it, 0, 1);
    for (std::int64_t s = 0; s < b.num_samples; ++s) {
      const double p = 1 / (1 + std::exp(-model.logit(b, s)));
      const auto bin = std::min<std::size_t>(9, static_cast<std::size_t>(p * 10));
      p_sum[bin] += p;
      clicks[bin] += b.labels[s];
      count[bin] += 1;
    }
  }
  int bins = 0;
  for (std::size_t k = 0; k < 10; ++k) {
    if (count[k] < 100) continue;
    const double mean_p = p_sum[k] / count[k];
    EXPECT_NEAR(clicks[k] / count[k], mean_p, 5 * std::sqrt(mean_p * (1 - mean_p) / count[k])) << "bin " << k;
    ++bins;
  }
  EXPECT_GE(bins, 6);  // the model spreads its probabilities
}

TEST(PlantedLabels, SameLabelsOnAnySplitAndAHeldOutStreamUnderTheSameModel) {
  const auto data = planted_data();
  const SyntheticGenerator gen(data, 5, 30);
  const Batch whole = gen.generate(2, 0, 1);
  std::vector<float> joined;
  for (int r = 0; r < 4; ++r) {
    const Batch part = gen.generate(2, r, 4);
    joined.insert(joined.end(), part.labels.begin(), part.labels.end());
  }
  EXPECT_EQ(joined, whole.labels);
  // Another sample seed, the same model: other samples, and a key means what it meant.
  const SyntheticGenerator held_out(data, 1234, 30, 5);
  const Batch other = held_out.generate(2, 0, 1);
  EXPECT_NE(other.keys, whole.keys);
  const PlantedLabels model(*data.synthetic.planted_labels, 5);
  const PlantedLabels other_model(*data.synthetic.planted_labels, 1234);
  EXPECT_EQ(model.key_value(17), PlantedLabels(*data.synthetic.planted_labels, 5).key_value(17));
  EXPECT_NE(model.key_value(17), other_model.key_value(17));
}

// labels.seed fixes the hidden model across sample seeds: two generators of other seeds then
// label the same sample alike (the logit is a function of the sample and the model only).
TEST(PlantedLabels, AFixedModelSeedKeepsTheModelAcrossSampleSeeds) {
  auto data = planted_data();
  data.synthetic.planted_labels->seed = 99;
  const SyntheticGenerator a(data, 5, 30), b(data, 6, 30);
  const PlantedLabels fixed(*data.synthetic.planted_labels, 99);
  for (const auto* gen : {&a, &b}) {
    const Batch batch = gen->generate(3, 0, 1);
    const Batch again = SyntheticGenerator(data, gen == &a ? 5 : 6, 30, 12345).generate(3, 0, 1);
    EXPECT_EQ(batch.labels, again.labels);  // the seed wins over label_model_seed
  }
  EXPECT_NE(a.generate(3, 0, 1).keys, b.generate(3, 0, 1).keys);
  EXPECT_NE(fixed.key_value(17), PlantedLabels(*data.synthetic.planted_labels, 5).key_value(17));
}

TEST(PlantedLabels, TheModelsOwnScoreIsTheCeiling) {
  const auto data = planted_data();
  const SyntheticGenerator gen(data, 3, 20000);
  const PlantedLabels model(*data.synthetic.planted_labels, 3);
  const Batch b = gen.generate(0, 0, 1);
  std::vector<float> best, noisy;
  std::mt19937_64 rng(1);
  std::normal_distribution<double> noise(0.0, 1.0);
  for (std::int64_t s = 0; s < b.num_samples; ++s) {
    const double z = model.logit(b, s);
    best.push_back(static_cast<float>(z));
    noisy.push_back(static_cast<float>(z + noise(rng)));
  }
  const double ceiling = model::auc(best, b.labels).value;
  EXPECT_GT(ceiling, 0.75);
  EXPECT_GT(ceiling, model::auc(noisy, b.labels).value + 0.02);
}

}  // namespace
}  // namespace embscale::workloads
