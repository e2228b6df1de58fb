// The bucket logic of the device table (kv/portable/bucket_ref.hpp) run on the host: HostTile
// plays every lane, HostAtomics makes the compare-and-swaps. Each test holds it to a brute-force
// oracle on randomized inputs (fixed seeds), for tiles of 4, 8, 16 and 32 lanes; the same source
// runs on the GPU under kernels/device_tile.cuh.
#include "kv/portable/bucket_ref.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "core/hash.hpp"
#include "kv/portable/atomics.hpp"

namespace embscale::kv::portable {
namespace {

// A bucket's arrays, every slot empty.
struct Bucket {
  explicit Bucket(std::uint32_t capacity) : keys(capacity, kEmptyKey), scores(capacity, 0), digests(capacity, 0) {}
  std::vector<std::uint64_t> keys, scores;
  std::vector<std::uint8_t> digests;
};

std::uint8_t digest_of(std::uint64_t key) { return static_cast<std::uint8_t>(mix64(key) >> 56); }

template <class TileType> class BucketRefTest : public ::testing::Test {
 protected:
  using Tile = TileType;
  using Ref = BucketRef<Tile, HostAtomics>;

  static Ref ref_of(Bucket& b) {
    return Ref(b.keys.data(), b.scores.data(), b.digests.data(), static_cast<std::uint32_t>(b.keys.size()));
  }
  static std::uint32_t start_of(const Ref& ref, std::uint64_t key) { return ref.probe_start(mix64(key)); }

  Tile tile;
};

using Tiles = ::testing::Types<HostTile<4>, HostTile<8>, HostTile<16>, HostTile<32>>;
TYPED_TEST_SUITE(BucketRefTest, Tiles);

// Keys below the reserved range, distinct, from a fixed seed.
std::vector<std::uint64_t> distinct_keys(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::set<std::uint64_t> seen;
  std::vector<std::uint64_t> keys;
  while (keys.size() < n) {
    const std::uint64_t key = random() % (kFirstReserved - 1);
    if (seen.insert(key).second) keys.push_back(key);
  }
  return keys;
}

TYPED_TEST(BucketRefTest, FindsEveryKeyItPlacedPastErasedSlotsAndNoOther) {
  for (const std::uint32_t capacity : {32u, 128u}) {
    Bucket bucket(capacity);
    auto ref = this->ref_of(bucket);
    const auto keys = distinct_keys(capacity + 40, 20261128 + capacity);
    std::map<std::uint64_t, std::uint32_t> placed;
    for (std::size_t i = 0; i < capacity; ++i) {
      const std::uint64_t key = keys[i];
      const std::uint32_t slot = ref.claim_free(this->tile, key, digest_of(key), i, this->start_of(ref, key));
      ASSERT_NE(slot, kNoSlot) << "a free slot was left, key " << i;
      EXPECT_EQ(bucket.keys[slot], key);
      EXPECT_EQ(bucket.scores[slot], i);
      EXPECT_EQ(bucket.digests[slot], digest_of(key));
      placed[key] = slot;
    }
    EXPECT_EQ(ref.claim_free(this->tile, keys[capacity], digest_of(keys[capacity]), 0, 0), kNoSlot) << "full";
    for (const auto& [key, slot] : placed)
      EXPECT_EQ(ref.find(this->tile, key, digest_of(key), this->start_of(ref, key)), slot);
    for (std::size_t i = capacity; i < keys.size(); ++i)
      EXPECT_EQ(ref.find(this->tile, keys[i], digest_of(keys[i]), this->start_of(ref, keys[i])), kNoSlot);
    // Erase every third key: the rest are still found (probes go on past reclaimed slots), the
    // erased are not, and new keys take exactly the reclaimed slots.
    std::set<std::uint32_t> reclaimed;
    for (std::size_t i = 0; i < capacity; i += 3) {
      const std::uint64_t key = keys[i];
      EXPECT_EQ(ref.erase(this->tile, key, digest_of(key), this->start_of(ref, key)), placed[key]);
      reclaimed.insert(placed[key]);
      placed.erase(key);
    }
    for (const auto& [key, slot] : placed)
      EXPECT_EQ(ref.find(this->tile, key, digest_of(key), this->start_of(ref, key)), slot);
    for (std::size_t i = 0; i < capacity; i += 3)
      EXPECT_EQ(ref.find(this->tile, keys[i], digest_of(keys[i]), this->start_of(ref, keys[i])), kNoSlot);
    std::set<std::uint32_t> refilled;
    for (std::size_t i = capacity; refilled.size() < reclaimed.size(); ++i) {
      const std::uint32_t slot =
          ref.claim_free(this->tile, keys[i], digest_of(keys[i]), 0, this->start_of(ref, keys[i]));
      ASSERT_NE(slot, kNoSlot);
      refilled.insert(slot);
    }
    EXPECT_EQ(refilled, reclaimed);
  }
}

TYPED_TEST(BucketRefTest, TheVictimIsTheLowestScoreTiesBrokenByTheSmallestKey) {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 50; ++trial) {
    Bucket bucket(64);
    auto ref = this->ref_of(bucket);
    // Scores from a few values, so that ties are common; some slots left empty or reclaimed.
    for (std::uint32_t s = 0; s < 64; ++s) {
      const auto roll = random() % 10;
      bucket.keys[s] = roll == 0 ? kEmptyKey : roll == 1 ? kReclaimedKey : random() % 100000;
      bucket.scores[s] = random() % 4;
    }
    std::uint32_t expected = kNoSlot;
    for (std::uint32_t s = 0; s < 64; ++s) {
      if (!holds_key(bucket.keys[s])) continue;
      if (expected == kNoSlot || bucket.scores[s] < bucket.scores[expected] ||
          (bucket.scores[s] == bucket.scores[expected] && bucket.keys[s] < bucket.keys[expected]))
        expected = s;
    }
    const Victim victim = ref.lowest(this->tile);
    if (expected == kNoSlot) {
      EXPECT_EQ(victim.slot, kNoSlot);
      continue;
    }
    // Keys may repeat in this made-up bucket: the smallest (score, key) pair is what must match.
    EXPECT_EQ(victim.score, bucket.scores[expected]) << "trial " << trial;
    EXPECT_EQ(victim.key, bucket.keys[expected]) << "trial " << trial;
    EXPECT_EQ(bucket.keys[victim.slot], victim.key);
    EXPECT_EQ(bucket.scores[victim.slot], victim.score);
  }
}

// The CPU table's placement rule, one key at a time: present keys are found, a free slot is
// taken, a full bucket gives up its lowest (score, key) to a newcomer whose score is not lower,
// else refuses it.
TYPED_TEST(BucketRefTest, InsertOrEvictFollowsTheCpuTablesPlacementRule) {
  constexpr std::uint32_t kCapacity = 32;
  Bucket bucket(kCapacity);
  auto ref = this->ref_of(bucket);
  std::map<std::uint64_t, std::uint64_t> model;  // key -> score
  std::mt19937_64 random(11);
  int evictions = 0, refusals = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t key = random() % 200;
    const std::uint64_t score = random() % 50;
    const PlacementResult got = ref.insert_or_evict(this->tile, key, digest_of(key), score, this->start_of(ref, key));
    if (model.count(key)) {
      EXPECT_EQ(got.placement, Placement::kFound) << "step " << i;
      EXPECT_EQ(bucket.keys[got.slot], key);
      continue;
    }
    if (model.size() < kCapacity) {
      EXPECT_EQ(got.placement, Placement::kFreeSlot) << "step " << i;
      model[key] = score;
      continue;
    }
    auto lowest = model.begin();
    for (auto it = model.begin(); it != model.end(); ++it)
      if (it->second < lowest->second) lowest = it;  // ties: the map's order is the smallest key
    if (score < lowest->second) {
      EXPECT_EQ(got.placement, Placement::kRefused) << "step " << i;
      ++refusals;
      continue;
    }
    ASSERT_EQ(got.placement, Placement::kEvicted) << "step " << i;
    EXPECT_EQ(got.victim.key, lowest->first) << "step " << i;
    EXPECT_EQ(got.victim.score, lowest->second) << "step " << i;
    EXPECT_EQ(bucket.keys[got.slot], key);
    model.erase(lowest);
    model[key] = score;
    ++evictions;
  }
  EXPECT_GT(evictions, 100);
  EXPECT_GT(refusals, 100);
  std::map<std::uint64_t, std::uint64_t> held;
  for (std::uint32_t s = 0; s < kCapacity; ++s)
    if (holds_key(bucket.keys[s])) held[bucket.keys[s]] = bucket.scores[s];
  EXPECT_EQ(held, model);
}

// Threads claiming distinct keys in one bucket at once (the device table's batches): every slot
// ends up with exactly one key, no key is placed twice or lost, and exactly the keys that found
// no slot were told so.
TYPED_TEST(BucketRefTest, ConcurrentClaimsPlaceEveryKeyOnce) {
  constexpr std::uint32_t kCapacity = 128;
  constexpr int kThreads = 4, kPerThread = 40;  // 160 keys for 128 slots
  Bucket bucket(kCapacity);
  auto ref = this->ref_of(bucket);
  const auto keys = distinct_keys(kThreads * kPerThread, 3);
  std::vector<std::uint32_t> slots(keys.size(), kNoSlot);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const typename TestFixture::Tile own_tile;  // a tile per thread, as each warp has its own
      for (int i = 0; i < kPerThread; ++i) {
        const std::size_t k = static_cast<std::size_t>(t * kPerThread + i);
        slots[k] = ref.claim_free(own_tile, keys[k], digest_of(keys[k]), 1, this->start_of(ref, keys[k]));
      }
    });
  for (auto& thread : threads) thread.join();
  std::set<std::uint64_t> in_bucket;
  for (const std::uint64_t key : bucket.keys) {
    ASSERT_TRUE(holds_key(key)) << "a slot was left free with keys refused";
    EXPECT_TRUE(in_bucket.insert(key).second) << "key " << key << " placed twice";
  }
  std::size_t told_placed = 0;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (slots[k] == kNoSlot) {
      EXPECT_EQ(in_bucket.count(keys[k]), 0u) << "a refused key is in the bucket";
      continue;
    }
    ++told_placed;
    EXPECT_EQ(bucket.keys[slots[k]], keys[k]);
  }
  EXPECT_EQ(told_placed, kCapacity);
}

}  // namespace
}  // namespace embscale::kv::portable
