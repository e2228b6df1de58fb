// The device table's per-key operations (kv/portable/table_ref.hpp) run on the host, key by key
// with HostTile, against the CPU table's reference model (reference_table.hpp): batches of
// distinct keys (what the device table's operations see once a batch is de-duplicated) under
// several score strategies, insert_or_assign and accum_or_assign calls, each call's found /
// inserted / evicted / refused counts, the evicted entries in order, every find, erases, and the
// whole contents at the end. The scores come from
// kv/score_rules.hpp on both sides' behalf: the portable path calls its functions, the reference
// writes each rule out by hand.
#include "kv/portable/table_ref.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "kv/portable/atomics.hpp"
#include "reference_table.hpp"

namespace embscale::kv::portable {
namespace {

constexpr std::uint32_t kBucketCapacity = 16;
constexpr std::uint64_t kBuckets = 8;  // 128 slots, no growth: init_capacity = max_capacity
constexpr std::uint32_t kDim = 5;

TableOptions reference_options(ScoreStrategy strategy) {
  TableOptions o;
  o.dim = kDim;
  o.optimizer_state_width = 0;
  o.bucket_capacity = kBucketCapacity;
  o.init_capacity = kBuckets * kBucketCapacity;
  o.max_capacity = kBuckets * kBucketCapacity;
  o.score_strategy = strategy;
  o.seed = 42;
  return o;
}

// The portable table's arrays on the host.
struct HostArrays {
  HostArrays()
      : keys(kBuckets * kBucketCapacity, kEmptyKey), scores(keys.size(), 0), digests(keys.size(), 0),
        rows(keys.size() * kDim, 0.0f) {}
  TableArrays view() {
    return TableArrays{keys.data(), scores.data(), digests.data(), rows.data(), kBuckets, kBucketCapacity, kDim};
  }
  std::vector<std::uint64_t> keys, scores;
  std::vector<std::uint8_t> digests;
  std::vector<float> rows;
};

template <class TileType> class TableRefTest : public ::testing::Test {};

using Tiles = ::testing::Types<HostTile<4>, HostTile<8>, HostTile<16>>;
TYPED_TEST_SUITE(TableRefTest, Tiles);

TYPED_TEST(TableRefTest, BatchesOfDistinctKeysMatchTheReferenceModel) {
  for (const ScoreStrategy strategy :
       {ScoreStrategy::kStep, ScoreStrategy::kLfu, ScoreStrategy::kCustomized, ScoreStrategy::kEpochLfu}) {
    SCOPED_TRACE(std::string(score_rules(strategy).name));
    testing::ReferenceTable reference(reference_options(strategy));
    HostArrays arrays;
    TableRef<TypeParam, HostAtomics> table(arrays.view());
    const TypeParam tile;
    const ScoreRules& rules = score_rules(strategy);
    std::mt19937_64 random(static_cast<std::uint64_t>(strategy) + 1000 * TypeParam::kSize);
    std::uint64_t step = 0;
    std::uint32_t epoch = 0;
    CallStats total;  // the run must reach every placement
    std::vector<std::uint64_t> key_space(400);
    for (std::size_t k = 0; k < key_space.size(); ++k) key_space[k] = k * 2654435761ULL % 1000003;
    for (int call = 0; call < 120; ++call) {
      if (call % 40 == 39) reference.set_epoch(++epoch);  // EPOCH_LFU's counts restart
      const std::uint64_t epoch_high = std::uint64_t{epoch} << 32;
      if (call % 10 == 9) {  // erase some keys
        std::vector<std::uint64_t> gone;
        std::sample(key_space.begin(), key_space.end(), std::back_inserter(gone), 30, random);
        std::int64_t erased = 0;
        for (const auto key : gone) erased += table.erase(tile, key);
        EXPECT_EQ(erased, reference.erase(gone).found) << "call " << call;
        continue;
      }
      // 24 distinct keys, most from 50 hot ones: their counts grow, so that under the counting
      // strategies newcomers meet full buckets of higher scores and are refused.
      std::vector<std::uint64_t> keys;
      while (keys.size() < 24) {
        const std::uint64_t key = key_space[random() % 3 ? random() % 50 : random() % key_space.size()];
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
      }
      std::vector<float> values(keys.size() * kDim);
      for (auto& v : values) v = static_cast<float>(random() % 1000) / 8.0f;
      std::vector<std::uint64_t> custom;
      if (strategy == ScoreStrategy::kCustomized)
        for (std::size_t i = 0; i < keys.size(); ++i) custom.push_back(random() % 40);
      // Every third call accumulates into most of its keys (accum_or_assign), the rest assign.
      const bool accumulating = call % 3 == 1;
      std::vector<std::uint8_t> accumulate(keys.size(), 0);
      if (accumulating)
        for (auto& a : accumulate) a = random() % 10 < 7;
      Evicted want_evicted;
      const CallStats want = accumulating ? reference.accum_or_assign(keys, values, accumulate, custom)
                                          : reference.upsert(keys, values, custom, &want_evicted);
      // The call's score, read once (STEP advances once per call), then each key's.
      const std::uint64_t call_score = read_call_score(
          rules.call, epoch_high, 0, [] { return std::uint64_t{0}; }, [&] { return ++step; });
      CallStats got;
      Evicted got_evicted;
      std::vector<float> evicted_row(kDim);
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::optional<std::uint64_t> caller =
            custom.empty() ? std::nullopt : std::optional<std::uint64_t>(custom[i]);
        const CallScores scores{&rules, new_key_score(rules, call_score, epoch_high, caller), epoch_high};
        const PlacementResult r =
            accumulating ? table.accum_or_assign(tile, keys[i], values.data() + i * kDim, accumulate[i], scores)
                         : table.insert_or_assign(tile, keys[i], values.data() + i * kDim, scores, evicted_row.data());
        switch (r.placement) {
          case Placement::kFound: ++got.found; break;
          case Placement::kFreeSlot: ++got.inserted; break;
          case Placement::kEvicted:
            ++got.inserted;
            ++got.evicted;
            if (accumulating) break;  // accum_or_assign reports evictions by count only
            got_evicted.keys.push_back(r.victim.key);
            got_evicted.scores.push_back(r.victim.score);
            got_evicted.values.insert(got_evicted.values.end(), evicted_row.begin(), evicted_row.end());
            break;
          case Placement::kRefused: ++got.refused; break;
          case Placement::kAbsent: break;  // accumulating into a missing key: nothing
        }
      }
      total += got;
      EXPECT_EQ(got.found, want.found) << "call " << call;
      EXPECT_EQ(got.inserted, want.inserted) << "call " << call;
      EXPECT_EQ(got.evicted, want.evicted) << "call " << call;
      EXPECT_EQ(got.refused, want.refused) << "call " << call;
      EXPECT_EQ(got_evicted.keys, want_evicted.keys) << "call " << call;
      EXPECT_EQ(got_evicted.scores, want_evicted.scores) << "call " << call;
      EXPECT_EQ(got_evicted.values, want_evicted.values) << "call " << call;
    }
    EXPECT_GT(total.found, 100);
    EXPECT_GT(total.evicted, 100);
    // Refusals need a full bucket of higher scores: random caller scores give many; the counting
    // strategies keep cold keys at 1 beside the hot ones, which a newcomer (1) ties and evicts.
    if (strategy == ScoreStrategy::kCustomized) {
      EXPECT_GT(total.refused, 20);
    }
    // Every key: found exactly when the reference holds it, with its row and score.
    std::vector<float> row(kDim);
    for (const auto key : key_space) {
      std::uint64_t score = 0;
      const bool found = table.find(tile, key, row.data(), &score);
      const auto* entry = reference.lookup(key);
      ASSERT_EQ(found, entry != nullptr) << "key " << key;
      if (!entry) continue;
      EXPECT_EQ(score, entry->score) << "key " << key;
      EXPECT_EQ(row, entry->row) << "key " << key;
    }
  }
}

}  // namespace
}  // namespace embscale::kv::portable
