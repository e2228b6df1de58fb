#include "embedding/key_router.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace embscale::embedding {
namespace {

constexpr Key kMaxKey = std::numeric_limits<Key>::max();

// The routing the documentation promises, by the most direct means: walk the keys in input
// order, append each key (each new one, with de-duplication) to its owner's list, remember where
// it went (std::map), then concatenate the lists in rank order.
template <class Owner> RoutedKeys oracle(const std::vector<Key>& keys, int ranks, const Owner& owner, bool dedup) {
  std::vector<std::vector<Key>> groups(static_cast<std::size_t>(ranks));
  std::vector<std::pair<std::size_t, std::size_t>> where(keys.size());  // (group, index in it)
  std::map<Key, std::pair<std::size_t, std::size_t>> first;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (dedup) {
      if (const auto it = first.find(keys[i]); it != first.end()) {
        where[i] = it->second;
        continue;
      }
    }
    auto& group = groups[static_cast<std::size_t>(owner(keys[i]))];
    where[i] = {static_cast<std::size_t>(owner(keys[i])), group.size()};
    group.push_back(keys[i]);
    first.emplace(keys[i], where[i]);
  }
  RoutedKeys out;
  std::vector<std::size_t> group_first;
  for (const auto& group : groups) {
    group_first.push_back(out.send_keys.size());
    out.send_keys.insert(out.send_keys.end(), group.begin(), group.end());
    out.send_counts.push_back(group.size());
  }
  for (const auto& [group, index] : where)
    out.inverse.push_back(static_cast<std::uint32_t>(group_first[group] + index));
  return out;
}

// Routes with `router` (reused across calls, as a step does) and compares with the oracle.
template <class Owner>
void expect_routes_like_oracle(KeyRouter& router, const std::vector<Key>& keys, int ranks, const Owner& owner,
                               bool dedup, const std::string& what) {
  SCOPED_TRACE(what + ", ranks " + std::to_string(ranks) + (dedup ? ", de-duplicated" : ", every occurrence"));
  RoutedKeys routed;
  routed.send_keys.assign(3, -7);  // stale content from an earlier batch must not survive
  routed.inverse.assign(5, 99);
  router.route(keys, ranks, owner, routed, dedup ? Deduplication::kOn : Deduplication::kOff);
  const RoutedKeys expected = oracle(keys, ranks, owner, dedup);
  ASSERT_EQ(routed.send_counts, expected.send_counts);
  ASSERT_EQ(routed.send_keys, expected.send_keys);
  ASSERT_EQ(routed.inverse, expected.inverse);
  // The invariants again, stated directly (the oracle could share a misreading of the contract).
  for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(routed.send_keys[routed.inverse[i]], keys[i]);
  std::vector<Key> sorted = routed.send_keys;
  std::sort(sorted.begin(), sorted.end());
  if (dedup) {
    EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "a key is sent twice";
  } else {
    std::vector<std::uint32_t> permutation = routed.inverse;
    std::sort(permutation.begin(), permutation.end());
    for (std::size_t i = 0; i < permutation.size(); ++i) ASSERT_EQ(permutation[i], i) << "inverse is no permutation";
  }
}

// Owner functions of the engine's schemes, each a different shape of callable.
struct RowBlocks {  // TorchRec row-wise: rank r owns [starts[r], starts[r + 1])
  std::vector<Key> starts;
  int operator()(Key key) const {
    return static_cast<int>(std::upper_bound(starts.begin() + 1, starts.end(), key) - starts.begin() - 1);
  }
};
RowBlocks row_blocks(int ranks, Key space) {
  RowBlocks blocks;
  for (int r = 0; r < ranks; ++r) blocks.starts.push_back(space / ranks * r);
  return blocks;
}
struct BySlot {                   // table-wise: a key's slot (unified encoding) decides its rank
  std::vector<Key> slot_offsets;  // slot s is [slot_offsets[s], slot_offsets[s + 1])
  std::vector<int> slot_owner;
  int operator()(Key key) const {
    const auto slot = std::upper_bound(slot_offsets.begin(), slot_offsets.end(), key) - slot_offsets.begin() - 1;
    return slot_owner[static_cast<std::size_t>(slot)];
  }
};

// Keys drawn with a fixed seed: uniform in [low, low + span), or skewed (u^6 concentrates the
// draws near `low`, a Zipf-like head of hot keys with a long tail).
std::vector<Key> draw_keys(std::uint64_t seed, std::size_t n, Key low, Key span, bool skewed) {
  const CounterRng rng(seed, 0);
  std::vector<Key> keys(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = rng.uniform(i);
    const double x = skewed ? std::pow(u, 6.0) : u;
    keys[i] = low + std::min<Key>(span - 1, static_cast<Key>(x * static_cast<double>(span)));
  }
  return keys;
}

struct Input {
  std::string name;
  std::vector<Key> keys;
  Key space;  // keys lie in [0, space) for the row-block owner
};

std::vector<Input> inputs() {
  std::vector<Input> in;
  in.push_back({"empty", {}, 100});
  in.push_back({"one key", {42}, 100});
  in.push_back({"all equal", std::vector<Key>(3000, 12345), 20000});
  in.push_back({"uniform, many repeats", draw_keys(1, 5000, 0, 700, false), 700});
  in.push_back({"uniform, few repeats", draw_keys(2, 20000, 0, 1'000'000, false), 1'000'000});
  in.push_back({"zipf-like", draw_keys(3, 20000, 0, 100'000, true), 100'000});
  auto high = draw_keys(4, 4000, kMaxKey - 3000, 3001, false);
  high.push_back(kMaxKey);
  high.push_back(0);
  high.push_back(kMaxKey);
  in.push_back({"near INT64_MAX", high, kMaxKey});
  // Strided keys (one residue modulo 64) probe the hash table's mixing.
  std::vector<Key> strided;
  for (Key k = 0; k < 4096; ++k) strided.push_back(k * 64 % 40960 * 64);
  in.push_back({"strided", strided, 40960 * 64});
  return in;
}

TEST(KeyRouter, MatchesTheOracleForEveryOwnerRankCountAndInput) {
  KeyRouter router;  // one router for everything: big and small batches alternate
  for (const Input& input : inputs())
    for (int ranks : {1, 2, 3, 4, 7})
      for (bool dedup : {true, false}) {
        const ModuloSharding modulo{ranks};
        expect_routes_like_oracle(
            router, input.keys, ranks, [modulo](Key k) { return modulo.owner(k); }, dedup,
            input.name + ", key % ranks");
        expect_routes_like_oracle(router, input.keys, ranks, row_blocks(ranks, input.space), dedup,
                                  input.name + ", row blocks");
        const BySlot by_slot{{0, input.space / 3, input.space / 3 * 2}, {ranks - 1, 0, ranks / 2}};
        expect_routes_like_oracle(router, input.keys, ranks, by_slot, dedup, input.name + ", by slot");
        expect_routes_like_oracle(
            router, input.keys, ranks, [ranks](Key) { return ranks - 1; }, dedup,
            input.name + ", all to the last rank");
      }
}

TEST(KeyRouter, ModuloShardingOverloadAndOneShotRouteKeysAgreeWithTheOracle) {
  const auto keys = draw_keys(5, 10000, 0, 50000, true);
  const ModuloSharding sharding{3};
  const auto owner = [sharding](Key k) { return sharding.owner(k); };
  const RoutedKeys expected = oracle(keys, 3, owner, true);
  KeyRouter router;
  RoutedKeys routed;
  router.route(keys, sharding, routed);
  EXPECT_EQ(routed.send_keys, expected.send_keys);
  EXPECT_EQ(routed.inverse, expected.inverse);
  const RoutedKeys once = route_keys(keys, sharding);
  EXPECT_EQ(once.send_keys, expected.send_keys);
  EXPECT_EQ(once.send_counts, expected.send_counts);
  EXPECT_EQ(once.inverse, expected.inverse);
}

TEST(KeyRouter, ManyCallsOnOneRouterStayExact) {
  // Every call starts from an empty table without clearing it (generation stamps): keys of
  // earlier calls must never be found, whether the next batch is smaller, larger or the same.
  KeyRouter router;
  RoutedKeys routed;
  const ModuloSharding sharding{4};
  for (std::uint64_t call = 0; call < 40; ++call) {
    const std::size_t n = (call % 3 == 0) ? 5000 : (call % 3 == 1 ? 17 : 900);
    const auto keys = draw_keys(100 + call, n, 0, 2000, call % 2 == 0);
    router.route(keys, sharding, routed);
    const RoutedKeys expected = oracle(
        keys, 4, [sharding](Key k) { return sharding.owner(k); }, true);
    ASSERT_EQ(routed.send_keys, expected.send_keys) << "call " << call;
    ASSERT_EQ(routed.inverse, expected.inverse) << "call " << call;
  }
}

TEST(KeyRouter, SteadyBatchesReuseTheOutputBuffers) {
  // Batches of one size: the output vectors keep their storage (the scratch is sized the same way).
  KeyRouter router;
  RoutedKeys routed;
  routed.send_keys.reserve(4000);  // room for any distinct count of these batches
  router.route(draw_keys(6, 4000, 0, 3000, false), ModuloSharding{2}, routed);
  const Key* const keys_before = routed.send_keys.data();
  const std::uint32_t* const inverse_before = routed.inverse.data();
  router.route(draw_keys(7, 4000, 0, 3000, false), ModuloSharding{2}, routed);
  EXPECT_EQ(routed.send_keys.data(), keys_before);
  EXPECT_EQ(routed.inverse.data(), inverse_before);
}

TEST(KeyRouter, NegativeKeysAreRefusedNamingTheFirst) {
  KeyRouter router;
  RoutedKeys routed;
  const std::vector<Key> keys = {3, 5, -2, 7, -9};
  for (auto dedup : {Deduplication::kOn, Deduplication::kOff}) {
    try {
      router.route(keys, ModuloSharding{2}, routed, dedup);
      ADD_FAILURE() << "a negative key was routed";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("non-negative, got -2 at batch position 2"), std::string::npos) << e.what();
    }
  }
  // The router stays usable after the error.
  router.route(std::vector<Key>{1, 2, 1}, ModuloSharding{2}, routed);
  EXPECT_EQ(routed.send_keys, (std::vector<Key>{2, 1}));
  EXPECT_EQ(routed.inverse, (std::vector<std::uint32_t>{1, 0, 1}));
}

TEST(KeyRouter, OwnersOutsideTheRanksAndNoRanksAreRefused) {
  KeyRouter router;
  RoutedKeys routed;
  const std::vector<Key> keys = {1, 2, 3};
  for (auto dedup : {Deduplication::kOn, Deduplication::kOff}) {
    EXPECT_THROW(router.route(
                     keys, 2, [](Key k) { return static_cast<int>(k); }, routed, dedup),
                 Error);
    EXPECT_THROW(router.route(
                     keys, 3, [](Key) { return -1; }, routed, dedup),
                 Error);
    EXPECT_THROW(router.route(
                     keys, 0, [](Key) { return 0; }, routed, dedup),
                 Error);
  }
}

TEST(KeyRouter, EmptyBatchGivesZeroCountsForEveryRank) {
  const RoutedKeys routed = route_keys({}, ModuloSharding{3});
  EXPECT_TRUE(routed.send_keys.empty());
  EXPECT_TRUE(routed.inverse.empty());
  EXPECT_EQ(routed.send_counts, (std::vector<std::size_t>{0, 0, 0}));
}

}  // namespace
}  // namespace embscale::embedding
