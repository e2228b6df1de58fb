// AUC, the area under the ROC curve of a model's scores against binary labels: the probability
// that a random positive sample scores above a random negative one, ties counting one half (the
// Mann-Whitney U statistic over positives x negatives). Exact: one sort of the scores, then
// integer sums (twice U, in 128 bits, so that no count is rounded on any data size).
//
// HugeCTR's `eval_metrics: ["AUC"]` is this figure over every rank's evaluation samples;
// global_auc gathers them to every rank, so every rank returns the same value.
//
// Its standard error is DeLong's (DeLong, DeLong and Clarke-Pearson, Biometrics 1988): each
// positive's share of negatives it outranks (V10) and each negative's share of positives that
// outrank it (V01) are the AUC's structural components, and Var(AUC) = Var(V10) / positives +
// Var(V01) / negatives with the sample variances. It is the spread of the AUC over other draws of
// the evaluation samples for a fixed model; embscale compare tests single runs' AUCs with it.
#pragma once

#include <cstdint>
#include <span>

#include "comm/communicator.hpp"

namespace embscale::model {

struct Auc {
  double value = 0.0;           // NaN when one class is absent (no pair to rank)
  double standard_error = 0.0;  // DeLong's; NaN with fewer than two samples of either class
  std::int64_t positives = 0;
  std::int64_t negatives = 0;
};

// A label above 0.5 is positive, as HugeCTR reads its 0/1 float labels. An Error names the first
// non-finite score or label, and sizes that differ.
Auc auc(std::span<const float> scores, std::span<const float> labels);

// The AUC of every rank's (score, label) pairs together, on every rank (collective). Each rank
// holds every rank's scores and labels for the sort: 8 bytes a sample.
Auc global_auc(comm::Communicator& comm, std::span<const float> scores, std::span<const float> labels);

}  // namespace embscale::model
