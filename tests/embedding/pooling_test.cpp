// The pooling arithmetic against a direct re-statement on random bags.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>

#include "core/error.hpp"
#include "embedding/pooling.hpp"

namespace embscale::embedding {
namespace {

// Renumbers ids in order of first appearance (0, 1, 2, ...), as KeyRouter numbers distinct keys.
void relabel_by_first_appearance(std::vector<std::uint32_t>& ids) {
  std::map<std::uint32_t, std::uint32_t> label;
  for (auto& id : ids) id = label.emplace(id, static_cast<std::uint32_t>(label.size())).first->second;
}

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
      const auto first = batch.offsets[static_cast<std::size_t>(b)],
                 last = batch.offsets[static_cast<std::size_t>(b) + 1];
      const double scale = mean && last > first ? 1.0 / static_cast<double>(last - first) : 1.0;
      for (std::size_t d = 0; d < dim; ++d) {
        double sum = 0;
        for (auto k = first; k < last; ++k) {
          sum += rows[inverse[static_cast<std::size_t>(k)] * dim + d];
          want_grads[inverse[static_cast<std::size_t>(k)] * dim + d] +=
              scale * grad[static_cast<std::size_t>(b) * dim + d];
        }
        EXPECT_NEAR(pooled[static_cast<std::size_t>(b) * dim + d], sum * scale, 1e-6);
      }
    }
    for (std::size_t i = 0; i < key_grads.size(); ++i) EXPECT_NEAR(key_grads[i], want_grads[i], 1e-6);

    // Owner-side pairs: pooling sums into positions, its backward gathers from them. unpool_pairs
    // takes KeyRouter's ids: numbered in order of first appearance, every one present.
    std::vector<std::int64_t> positions;
    for (std::size_t j = 0; j < inverse.size(); ++j) positions.push_back(static_cast<std::int64_t>(rng() % 4));
    relabel_by_first_appearance(inverse);
    const std::size_t ids = inverse.empty() ? 0 : *std::max_element(inverse.begin(), inverse.end()) + 1;
    std::vector<float> out(4 * dim, 0.0f), pair_grads(ids * dim);
    pool_pairs(positions, inverse, rows, dim, out);
    unpool_pairs(positions, inverse, out, dim, pair_grads);
    std::vector<double> want_out(out.size(), 0.0), want_pair(pair_grads.size(), 0.0);
    for (std::size_t j = 0; j < inverse.size(); ++j)
      for (std::size_t d = 0; d < dim; ++d)
        want_out[static_cast<std::size_t>(positions[j]) * dim + d] += rows[inverse[j] * dim + d];
    for (std::size_t j = 0; j < inverse.size(); ++j)
      for (std::size_t d = 0; d < dim; ++d)
        want_pair[inverse[j] * dim + d] += want_out[static_cast<std::size_t>(positions[j]) * dim + d];
    for (std::size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], want_out[i], 1e-5);
    for (std::size_t i = 0; i < pair_grads.size(); ++i) EXPECT_NEAR(pair_grads[i], want_pair[i], 1e-4);
  }
}

// An owner's pairs as the engine makes them: bags of 0-40 keys (runs of one position), ids of
// `distinct` keys numbered by first appearance, rows of `width` values; `split_runs` sends one
// position's pairs in two separate runs (what no engine output does, and the column split serves).
struct OwnerPairs {
  std::vector<std::int64_t> positions;
  std::vector<std::uint32_t> inverse;
  std::vector<float> rows;
  std::size_t bags = 0, ids = 0;
};

OwnerPairs owner_pairs(std::mt19937_64& rng, std::size_t bags, std::size_t distinct, std::size_t width,
                       bool split_runs) {
  OwnerPairs p;
  p.bags = bags;
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (std::size_t b = 0; b < bags; ++b)
    for (std::size_t k = rng() % 41; k > 0; --k) {  // some bags empty: their rows must come out 0
      p.positions.push_back(static_cast<std::int64_t>(b));
      p.inverse.push_back(static_cast<std::uint32_t>(rng() % distinct));
    }
  if (split_runs && !p.positions.empty()) {  // bag 0's pairs once more at the end
    p.positions.push_back(0);
    p.inverse.push_back(p.inverse.front());
  }
  relabel_by_first_appearance(p.inverse);
  p.ids = p.inverse.empty() ? 0 : *std::max_element(p.inverse.begin(), p.inverse.end()) + 1;
  p.rows.resize(p.ids * width);
  for (auto& v : p.rows) v = value(rng);
  return p;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Pair-order sums in plain scalar code: the reference every path must equal bit for bit.
std::vector<float> pooled_in_pair_order(const OwnerPairs& p, std::size_t width) {
  std::vector<float> out(p.bags * width, 0.0f);
  for (std::size_t j = 0; j < p.positions.size(); ++j)
    for (std::size_t d = 0; d < width; ++d)
      out[static_cast<std::size_t>(p.positions[j]) * width + d] += p.rows[p.inverse[j] * width + d];
  return out;
}

TEST(Pooling, PairsGiveThePairOrderSumsBitForBitOnAnyThreadsAndRowSource) {
  std::mt19937_64 rng(11);
  for (const std::size_t width : {1, 7, 32, 45, 128, 130})
    for (const bool split_runs : {false, true}) {
      const OwnerPairs p = owner_pairs(rng, 50, 300, width, split_runs);
      const auto want = pooled_in_pair_order(p, width);
      std::vector<const float*> addresses(p.ids);
      for (std::size_t i = 0; i < p.ids; ++i) addresses[i] = p.rows.data() + i * width;
      std::vector<const float*> pair_addresses;  // a row per pair: no de-duplication
      for (const auto id : p.inverse) pair_addresses.push_back(addresses[id]);
      for (const int threads : {1, 2, 3}) {
        // Garbage to start from: pool_pairs overwrites every value (rows of no pair with 0).
        std::vector<float> copied(want.size(), 1e30f), in_place(want.size(), -1e30f), per_pair(want.size(), 1e30f);
        pool_pairs(p.positions, p.inverse, p.rows, width, copied, threads);
        pool_pairs(p.positions, p.inverse, std::span<const float* const>(addresses), width, in_place, threads);
        pool_pairs(p.positions, std::span<const float* const>(pair_addresses), width, per_pair, threads);
        const std::string where = "width " + std::to_string(width) + ", threads " + std::to_string(threads) +
                                  ", split " + std::to_string(split_runs);
        EXPECT_TRUE(same_bits(copied, want)) << where;
        EXPECT_TRUE(same_bits(in_place, want)) << where;
        EXPECT_TRUE(same_bits(per_pair, want)) << where;
      }
    }
}

TEST(Pooling, UnpoolPairsWritesEveryIdWithoutZeroingAndRefusesIdsOutOfOrder) {
  std::mt19937_64 rng(12);
  const std::size_t width = 40;
  const OwnerPairs p = owner_pairs(rng, 30, 200, width, false);
  std::vector<float> grad_out(p.bags * width);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (auto& v : grad_out) v = value(rng);
  std::vector<float> want(p.ids * width, 0.0f);
  for (std::size_t j = 0; j < p.positions.size(); ++j)
    for (std::size_t d = 0; d < width; ++d)
      want[p.inverse[j] * width + d] += grad_out[static_cast<std::size_t>(p.positions[j]) * width + d];
  for (const int threads : {1, 2, 3}) {
    std::vector<float> grads(want.size(), 1e30f);  // garbage: every value must be written
    unpool_pairs(p.positions, p.inverse, grad_out, width, grads, threads);
    EXPECT_TRUE(same_bits(grads, want)) << "threads " << threads;
  }
  std::vector<std::uint32_t> skipping = p.inverse;  // id 1 before id 0 has appeared
  skipping.front() = 1;
  std::vector<float> grads(want.size());
  EXPECT_THROW(unpool_pairs(p.positions, skipping, grad_out, width, grads), Error);
  std::vector<float> one_too_many((p.ids + 1) * width);  // an id that never appears
  EXPECT_THROW(unpool_pairs(p.positions, p.inverse, grad_out, width, one_too_many), Error);
}

}  // namespace
}  // namespace embscale::embedding
