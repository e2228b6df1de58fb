// The planted label model: click labels drawn from a hidden logistic model of the generator's own
// samples, so a trained model's AUC has a known ceiling (the hidden model's own AUC on the same
// samples: no model scores them better in expectation) and quality costs (eviction, staleness,
// row precision) are measured against it. For sample s with bags B_j (slot j) and dense
// features x_d in [0, 1):
//   z = bias + key_scale / sqrt(S) * sum_j mean_{k in B_j} u(k)
//            + dense_scale / sqrt(D) * sum_d w_d sqrt(12) (x_d - 1/2)
//   label = 1 with probability sigmoid(z)
// with u(k) ~ N(0, 1) per key and w_d ~ N(0, 1) per feature, pure functions of the model's seed
// (so drift and id growth move which keys are drawn, not what a key means), and the label's draw
// a pure function of (seed, global sample, label index). Each term has unit variance over
// independent draws; the Zipf head makes the key term's spread smaller (the ceiling says how much).
// An empty bag adds nothing; several labels per sample draw each from the same z.
#pragma once

#include <cstdint>

#include "config/config.hpp"
#include "core/batch.hpp"

namespace embscale::workloads {

class PlantedLabels {
 public:
  PlantedLabels(const config::PlantedLabelModel& model, std::uint64_t seed) : model_(model), seed_(seed) {}

  // The hidden logit z of sample `s` of `batch` (its keys and dense features as generated).
  double logit(const Batch& batch, std::int64_t s) const;
  // Label `l` of global sample `sample` whose logit is z: 1 with probability sigmoid(z).
  float draw(std::uint64_t sample, std::int32_t l, std::int32_t label_dim, double z) const;

  // u(key) and w_d.
  double key_value(Key key) const;
  double dense_weight(std::int32_t d) const;

 private:
  config::PlantedLabelModel model_;
  std::uint64_t seed_;
};

}  // namespace embscale::workloads
