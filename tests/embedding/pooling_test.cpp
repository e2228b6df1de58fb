// The pooling arithmetic against a direct re-statement on random bags.
#include <gtest/gtest.h>

#include <random>

#include "embedding/pooling.hpp"

namespace embscale::embedding {
namespace {

Batch random_batch(std::mt19937_64& rng, std::int64_t samples, std::int32_t slots, std::uint32_t distinct,
                   std::vector<std::uint32_t>& inverse) {
  Batch b;
  b.num_samples = samples;
  b.num_slots = slots;
  for (std::int64_t bag = 0; bag < samples * slots; ++bag) {
    const auto n = rng() % 4;  // empty bags included
    for (std::uint64_t k = 0; k < n; ++k) {
      inverse.push_back(static_cast<std::uint32_t>(rng() % distinct));
      b.keys.push_back(static_cast<Key>(inverse.back()));
    }
    b.offsets.push_back(static_cast<std::int64_t>(b.keys.size()));
  }
  return b;
}

TEST(Pooling, BagsAndTheirBackwardMatchTheDefinition) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const std::size_t dim = 3;
  const std::uint32_t distinct = 5;
  for (const bool mean : {false, true}) {
    std::vector<std::uint32_t> inverse;
    const Batch batch = random_batch(rng, 6, 2, distinct, inverse);
    std::vector<float> rows(distinct * dim), grad(static_cast<std::size_t>(batch.num_bags()) * dim);
    for (auto& v : rows) v = value(rng);
    for (auto& v : grad) v = value(rng);
    std::vector<float> pooled(grad.size()), key_grads(rows.size());
    pool_bags(batch, inverse, rows, dim, mean, pooled);
    unpool_bags(batch, inverse, grad, dim, mean, key_grads);
    std::vector<double> want_grads(rows.size(), 0.0);
    for (std::int64_t b = 0; b < batch.num_bags(); ++b) {
      const auto first = batch.offsets[static_cast<std::size_t>(b)], last = batch.offsets[static_cast<std::size_t>(b) + 1];
      const double scale = mean && last > first ? 1.0 / static_cast<double>(last - first) : 1.0;
      for (std::size_t d = 0; d < dim; ++d) {
        double sum = 0;
        for (auto k = first; k < last; ++k) {
          sum += rows[inverse[static_cast<std::size_t>(k)] * dim + d];
          want_grads[inverse[static_cast<std::size_t>(k)] * dim + d] += scale * grad[static_cast<std::size_t>(b) * dim + d];
        }
        EXPECT_NEAR(pooled[static_cast<std::size_t>(b) * dim + d], sum * scale, 1e-6);
      }
    }
    for (std::size_t i = 0; i < key_grads.size(); ++i) EXPECT_NEAR(key_grads[i], want_grads[i], 1e-6);

    // Owner-side pairs: pooling sums into positions, its backward gathers from them.
    std::vector<std::int64_t> positions;
    for (std::size_t j = 0; j < inverse.size(); ++j) positions.push_back(static_cast<std::int64_t>(rng() % 4));
    std::vector<float> out(4 * dim, 0.0f), pair_grads(rows.size());
    pool_pairs(positions, inverse, rows, dim, out);
    unpool_pairs(positions, inverse, out, dim, pair_grads);
    std::vector<double> want_out(out.size(), 0.0), want_pair(rows.size(), 0.0);
    for (std::size_t j = 0; j < inverse.size(); ++j)
      for (std::size_t d = 0; d < dim; ++d) want_out[static_cast<std::size_t>(positions[j]) * dim + d] += rows[inverse[j] * dim + d];
    for (std::size_t j = 0; j < inverse.size(); ++j)
      for (std::size_t d = 0; d < dim; ++d) want_pair[inverse[j] * dim + d] += want_out[static_cast<std::size_t>(positions[j]) * dim + d];
    for (std::size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], want_out[i], 1e-5);
    for (std::size_t i = 0; i < pair_grads.size(); ++i) EXPECT_NEAR(pair_grads[i], want_pair[i], 1e-4);
  }
}

}  // namespace
}  // namespace embscale::embedding
