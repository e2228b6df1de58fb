#include "plan/table_load.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/batch_source.hpp"
#include "core/error.hpp"
#include "workloads/synthetic.hpp"

namespace embscale::plan {
namespace {

constexpr std::int64_t kBatch = 512;
constexpr int kBatches = 300;

// A config of one Data layer whose slots the test draws from, with the engine's seed.
config::Config config_of(const std::vector<std::int64_t>& sizes, const config::SlotWorkload& workload) {
  config::Config c;
  c.solver.seed = 20261125;
  c.solver.batchsize = kBatch;
  auto& d = c.data;
  d.name = "data";
  d.format = config::DataFormat::kSynthetic;
  d.slot_size_array = sizes;
  d.slot_num = static_cast<std::int32_t>(sizes.size());
  d.sparse_top = "data1";
  d.synthetic = config::SyntheticSource::same_for_all(workload, d.slot_num);
  return c;
}

// The owners as the schemes define them (lib/embedding: row_wise's RowBlocks, distributed_slot's
// key % ranks), written out here independently of table_load.cpp.
int owner(Ownership ownership, Key key, Key offset, std::int64_t rows, int ranks) {
  if (ownership == Ownership::kRowBlocks) return static_cast<int>((key - offset) / ((rows + ranks - 1) / ranks));
  return static_cast<int>(key % ranks);
}

struct Observed {
  std::vector<double> pairs_mean, distinct_mean, pairs_sd, distinct_sd;
};

// Per rank: the mean and standard deviation over kBatches generated global batches of the pairs
// and distinct keys of `slot` each rank owns.
Observed simulate(const config::Config& c, std::int32_t slot, Ownership ownership, int ranks) {
  const workloads::SyntheticGenerator generator(c.data, c.solver.seed, kBatch);
  const Key offset = generator.slot_offset(slot);
  const std::int64_t rows = c.data.slot_size_array[static_cast<std::size_t>(slot)];
  std::vector<std::vector<double>> pairs(static_cast<std::size_t>(ranks)), distinct(static_cast<std::size_t>(ranks));
  for (int it = 0; it < kBatches; ++it) {
    const Batch batch = generator.generate(it, 0, 1);
    std::vector<double> p(static_cast<std::size_t>(ranks), 0.0);
    std::vector<std::unordered_set<Key>> seen(static_cast<std::size_t>(ranks));
    for (std::int64_t b = slot; b < batch.num_bags(); b += batch.num_slots) {
      for (const Key key : batch.bag(b)) {
        const auto r = static_cast<std::size_t>(owner(ownership, key, offset, rows, ranks));
        p[r] += 1.0;
        seen[r].insert(key);
      }
    }
    for (int r = 0; r < ranks; ++r) {
      pairs[static_cast<std::size_t>(r)].push_back(p[static_cast<std::size_t>(r)]);
      distinct[static_cast<std::size_t>(r)].push_back(static_cast<double>(seen[static_cast<std::size_t>(r)].size()));
    }
  }
  const auto mean_sd = [](const std::vector<double>& v, std::vector<double>& means, std::vector<double>& sds) {
    double sum = 0, sq = 0;
    for (const auto x : v) sum += x;
    const double mean = sum / static_cast<double>(v.size());
    for (const auto x : v) sq += (x - mean) * (x - mean);
    means.push_back(mean);
    sds.push_back(std::sqrt(sq / static_cast<double>(v.size() - 1)));
  };
  Observed out;
  for (int r = 0; r < ranks; ++r) {
    mean_sd(pairs[static_cast<std::size_t>(r)], out.pairs_mean, out.pairs_sd);
    mean_sd(distinct[static_cast<std::size_t>(r)], out.distinct_mean, out.distinct_sd);
  }
  return out;
}

// The analytic loads within 5 standard errors of the simulated means (plus 0.2 % for the
// Poisson-free bag-size average of uniform bags): a false failure has probability below 1e-5 per
// comparison.
void expect_agreement(const config::Config& c, const std::string& name) {
  for (const int ranks : {2, 4}) {
    for (const auto ownership : {Ownership::kRowBlocks, Ownership::kKeyModulo}) {
      for (std::int32_t slot = 0; slot < c.data.slot_num; ++slot) {
        const auto table = table_model(c, slot, true);
        const auto predicted = expected_loads(table, ownership, ranks, kBatch);
        const auto observed = simulate(c, slot, ownership, ranks);
        for (int r = 0; r < ranks; ++r) {
          const auto ur = static_cast<std::size_t>(r);
          const double se_pairs = observed.pairs_sd[ur] / std::sqrt(double(kBatches));
          const double se_distinct = observed.distinct_sd[ur] / std::sqrt(double(kBatches));
          const std::string where = name + ", slot " + std::to_string(slot) + ", " + std::to_string(ranks) +
                                    " ranks, ownership " + std::to_string(int(ownership)) + ", rank " +
                                    std::to_string(r);
          EXPECT_NEAR(predicted[ur].pairs, observed.pairs_mean[ur],
                      5 * se_pairs + 0.002 * observed.pairs_mean[ur] + 1e-9)
              << where;
          EXPECT_NEAR(predicted[ur].distinct, observed.distinct_mean[ur],
                      5 * se_distinct + 0.002 * observed.distinct_mean[ur] + 1e-9)
              << where;
        }
      }
    }
  }
}

TEST(TableLoad, ZipfRowBlocksPutTheHeadOnRankZero) {
  config::SlotWorkload w;
  w.keys.zipf_alpha = 1.05;
  w.nnz = 4;
  const auto c = config_of({100'000, 3'000}, w);
  expect_agreement(c, "zipf 1.05 identity");
  const auto loads = expected_loads(table_model(c, 0, true), Ownership::kRowBlocks, 2, kBatch);
  EXPECT_GT(loads[0].pairs, 4 * loads[1].pairs);  // the skew-aware model sees it
  const auto blind = expected_loads(table_model(c, 0, false), Ownership::kRowBlocks, 2, kBatch);
  EXPECT_NEAR(blind[0].pairs, blind[1].pairs, 1e-9 * blind[0].pairs);  // TorchRec's even split
}

TEST(TableLoad, PermutedKeysFollowTheGeneratorsPermutation) {
  config::SlotWorkload w;
  w.keys.zipf_alpha = 1.3;
  w.mapping = config::KeyMapping::kPermutation;
  w.nnz = 3;
  expect_agreement(config_of({90'000, 777}, w), "zipf 1.3 permutation");
}

TEST(TableLoad, HotspotAndUniformBagSizes) {
  config::SlotWorkload w;
  w.keys.distribution = config::KeyDistribution::kHotspot;
  w.keys.hot_key_fraction = 0.05;
  w.keys.hot_access_fraction = 0.9;
  w.nnz = 6;
  w.nnz_min = 2;
  w.nnz_distribution = config::NnzDistribution::kUniform;
  expect_agreement(config_of({80'000, 5'000}, w), "hotspot, uniform bags");
}

TEST(TableLoad, OwnedRowsCountEachOwnersKeys) {
  config::SlotWorkload w;
  const auto c = config_of({1'001, 37, 50'000}, w);
  for (const int ranks : {1, 2, 3, 4, 7}) {
    for (std::int32_t slot = 0; slot < c.data.slot_num; ++slot) {
      const auto table = table_model(c, slot, false);
      for (const auto ownership : {Ownership::kRowBlocks, Ownership::kKeyModulo}) {
        std::vector<std::int64_t> count(static_cast<std::size_t>(ranks), 0);
        for (Key key = table.offset; key < table.offset + table.rows; ++key)
          ++count[static_cast<std::size_t>(owner(ownership, key, table.offset, table.rows, ranks))];
        EXPECT_EQ(owned_rows(table, ownership, ranks), count) << "slot " << slot << ", " << ranks << " ranks";
      }
      EXPECT_EQ(owned_rows(table, Ownership::kOneRank, ranks)[0], table.rows);
      EXPECT_EQ(owned_rows(table, Ownership::kReplicas, ranks).back(), table.rows);
    }
  }
}

// hot_replicated: each rank's own samples' hot keys (the first hot_rows of the key space) and
// the cold keys it owns under key % ranks, counted over generated batches (a plain model of the
// scheme, independent of table_load.cpp), against the analytic loads within 5 standard errors.
void expect_hot_replica_agreement(const config::Config& c, std::int32_t slot, std::int64_t hot_rows,
                                  const std::string& name) {
  const workloads::SyntheticGenerator generator(c.data, c.solver.seed, kBatch);
  const Key offset = generator.slot_offset(slot);
  auto table = table_model(c, slot, true);
  table.hot_rows = hot_rows;
  for (const int ranks : {2, 4}) {
    const auto n = static_cast<std::size_t>(ranks);
    // [quantity][rank][batch]: cold pairs, cold distinct, hot pairs, hot distinct
    std::vector<std::vector<std::vector<double>>> seen(4, std::vector<std::vector<double>>(n));
    for (int it = 0; it < kBatches; ++it) {
      const Batch batch = generator.generate(it, 0, 1);
      std::vector<double> cold_pairs(n, 0.0), hot_pairs(n, 0.0);
      std::vector<std::unordered_set<Key>> cold(n), hot(n);
      for (int r = 0; r < ranks; ++r) {
        const auto share = sample_share_of(kBatch, r, ranks);
        for (std::int64_t sample = share.first; sample < share.first + share.count; ++sample)
          for (const Key key : batch.bag(sample * batch.num_slots + slot)) {
            if (key - offset < hot_rows) {
              hot_pairs[static_cast<std::size_t>(r)] += 1.0;
              hot[static_cast<std::size_t>(r)].insert(key);
            } else {
              cold_pairs[static_cast<std::size_t>(key % ranks)] += 1.0;
              cold[static_cast<std::size_t>(key % ranks)].insert(key);
            }
          }
      }
      for (std::size_t r = 0; r < n; ++r) {
        seen[0][r].push_back(cold_pairs[r]);
        seen[1][r].push_back(static_cast<double>(cold[r].size()));
        seen[2][r].push_back(hot_pairs[r]);
        seen[3][r].push_back(static_cast<double>(hot[r].size()));
      }
    }
    const auto predicted = expected_loads(table, Ownership::kHotReplicas, ranks, kBatch);
    for (std::size_t r = 0; r < n; ++r) {
      const double want[] = {predicted[r].pairs, predicted[r].distinct, predicted[r].replica_pairs,
                             predicted[r].replica_distinct};
      for (std::size_t q = 0; q < 4; ++q) {
        const auto& v = seen[q][r];
        double sum = 0, sq = 0;
        for (const auto x : v) sum += x;
        const double mean = sum / static_cast<double>(v.size());
        for (const auto x : v) sq += (x - mean) * (x - mean);
        const double se = std::sqrt(sq / static_cast<double>(v.size() - 1)) / std::sqrt(double(kBatches));
        EXPECT_NEAR(want[q], mean, 5 * se + 0.002 * mean + 1e-9)
            << name << ", " << ranks << " ranks, rank " << r << ", quantity " << q;
      }
    }
  }
}

TEST(TableLoad, HotReplicasSplitTheHotPrefixFromTheOwnedRest) {
  config::SlotWorkload w;
  w.keys.zipf_alpha = 1.05;
  w.nnz = 4;
  const auto c = config_of({100'000, 3'000}, w);
  expect_hot_replica_agreement(c, 0, 500, "zipf 1.05, 500 hot rows");
  expect_hot_replica_agreement(c, 0, 80'000, "zipf 1.05, hot rows past the direct indices");
  expect_hot_replica_agreement(c, 1, 3'000, "every row hot");
  w.keys.zipf_alpha = 1.3;
  w.mapping = config::KeyMapping::kPermutation;
  expect_hot_replica_agreement(config_of({90'000, 777}, w), 0, 100, "permuted zipf 1.3, 100 hot rows");
  expect_hot_replica_agreement(config_of({90'000, 777}, w), 0, 70'000, "permuted, past the direct indices");
}

TEST(TableLoad, HotReplicasHoldEveryHotRowAndTheirModuloShare) {
  config::SlotWorkload w;
  const auto c = config_of({1'001, 37, 50'000}, w);
  for (const int ranks : {1, 2, 3, 7}) {
    for (std::int32_t slot = 0; slot < c.data.slot_num; ++slot) {
      auto table = table_model(c, slot, false);
      for (const std::int64_t hot : {std::int64_t{0}, std::int64_t{5}, table.rows}) {
        table.hot_rows = hot;
        // The replica, and every key = r (mod ranks): the cold store keeps its unused hot copies.
        std::vector<std::int64_t> count(static_cast<std::size_t>(ranks), hot);
        for (Key key = table.offset; key < table.offset + table.rows; ++key)
          ++count[static_cast<std::size_t>(key % ranks)];
        EXPECT_EQ(owned_rows(table, Ownership::kHotReplicas, ranks), count)
            << "slot " << slot << ", " << ranks << " ranks, " << hot << " hot";
      }
    }
  }
}

TEST(TableLoad, RefusesSlotsWithoutAModelNamingTheSlot) {
  config::SlotWorkload w;
  w.keys.distribution = config::KeyDistribution::kFbgemmZipf;
  auto c = config_of({1000, 1000}, w);
  try {
    (void)table_model(c, 1, true);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("slot 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("fbgemm_zipf"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW((void)table_model(c, 1, false));  // skew-blind needs no model
}

}  // namespace
}  // namespace embscale::plan
