#include "workloads/reuse_distance.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "workloads/trace_oracles.hpp"

namespace embscale::workloads {
namespace {

using testing::brute_force_reuse_distances;
using testing::random_stream;
using testing::simulate_lru_hits;

struct StreamCase {
  std::int64_t length;
  std::int64_t keys;
  double exponent;  // 0: uniform
};

// Short and long streams, few and many keys (few keys and long streams compact the tree many
// times; many keys make it grow), uniform and skewed.
const StreamCase kCases[] = {{1, 1, 0.0},       {50, 3, 0.0},      {3000, 10, 0.0}, {3000, 2500, 0.0},
                             {3000, 200, 1.05}, {3000, 5000, 0.9}, {2500, 40, 1.5}, {4000, 1500, 0.5}};

std::string name(const StreamCase& c) {
  return "length " + std::to_string(c.length) + ", keys " + std::to_string(c.keys) + ", s " +
         std::to_string(c.exponent);
}

// Keys of the streams are already dense ids in [0, keys).
ReuseDistanceCounter replay(const std::vector<Key>& stream, std::vector<std::int64_t>* distances = nullptr) {
  ReuseDistanceCounter counter;
  for (const Key key : stream) {
    const std::int64_t d = counter.access(static_cast<std::uint32_t>(key));
    if (distances) distances->push_back(d);
  }
  return counter;
}

TEST(ReuseDistance, EveryAccessMatchesTheQuadraticOracle) {
  std::uint64_t seed = 100;
  for (const StreamCase& c : kCases) {
    const auto stream = random_stream(c.length, c.keys, c.exponent, ++seed);
    std::vector<std::int64_t> distances;
    replay(stream, &distances);
    const auto expected = brute_force_reuse_distances(stream);
    ASSERT_EQ(distances.size(), expected.size());
    for (std::size_t t = 0; t < expected.size(); ++t)
      ASSERT_EQ(distances[t], expected[t]) << name(c) << ", access " << t;
  }
}

TEST(ReuseDistance, HitRatioMatchesAnLruSimulation) {
  std::uint64_t seed = 200;
  for (const StreamCase& c : kCases) {
    const auto stream = random_stream(c.length, c.keys, c.exponent, ++seed);
    const ReuseDistanceCounter counter = replay(stream);
    const ReuseDistanceStats stats = counter.summarize();
    for (const std::int64_t capacity : {1, 2, 3, 7, 16, 100, 1000, 4096}) {
      const double expected =
          static_cast<double>(simulate_lru_hits(stream, capacity)) / static_cast<double>(stream.size());
      EXPECT_DOUBLE_EQ(counter.lru_hit_ratio(capacity), expected) << name(c) << ", capacity " << capacity;
      const auto at = static_cast<std::size_t>(std::countr_zero(static_cast<std::uint64_t>(capacity)));
      if (std::has_single_bit(static_cast<std::uint64_t>(capacity)) && at < stats.lru_curve.size()) {
        EXPECT_EQ(stats.lru_curve[at].capacity, capacity);
        EXPECT_DOUBLE_EQ(stats.lru_curve[at].hit_ratio, expected) << name(c) << ", capacity " << capacity;
      }
    }
    // The curve ends at the first power of two holding every key: there, every reuse hits.
    ASSERT_FALSE(stats.lru_curve.empty());
    EXPECT_GE(stats.lru_curve.back().capacity, stats.distinct);
    EXPECT_LT(stats.lru_curve.back().capacity / 2, std::max<std::int64_t>(stats.distinct, 1));
    EXPECT_DOUBLE_EQ(stats.lru_curve.back().hit_ratio,
                     static_cast<double>(stats.accesses - stats.cold) / static_cast<double>(stats.accesses));
  }
}

TEST(ReuseDistance, SummaryMatchesSortedOracleDistances) {
  std::uint64_t seed = 300;
  for (const StreamCase& c : kCases) {
    const auto stream = random_stream(c.length, c.keys, c.exponent, ++seed);
    const ReuseDistanceStats stats = replay(stream).summarize();
    auto distances = brute_force_reuse_distances(stream);
    const auto cold = std::count(distances.begin(), distances.end(), testing::kColdDistance);
    EXPECT_EQ(stats.accesses, c.length) << name(c);
    EXPECT_EQ(stats.cold, cold) << name(c);
    std::erase(distances, testing::kColdDistance);
    std::sort(distances.begin(), distances.end());
    // Histogram by the bucket rule, recomputed with a loop instead of bit_width.
    std::vector<std::int64_t> histogram;
    for (const std::int64_t d : distances) {
      std::size_t bucket = 0;
      while ((std::int64_t{1} << bucket) <= d) ++bucket;  // d in [2^(bucket-1), 2^bucket)
      if (bucket >= histogram.size()) histogram.resize(bucket + 1, 0);
      ++histogram[bucket];
    }
    EXPECT_EQ(stats.histogram, histogram) << name(c);
    if (distances.empty()) {
      EXPECT_EQ(stats.median, -1);
      continue;
    }
    // Nearest rank: the ceil(q * reuses)-th smallest, computed here in exact rationals.
    const auto reuses = static_cast<std::int64_t>(distances.size());
    const auto nearest_rank = [&](std::int64_t percent) {
      const std::int64_t rank = (reuses * percent + 99) / 100;
      return distances[static_cast<std::size_t>(rank - 1)];
    };
    EXPECT_EQ(stats.median, nearest_rank(50)) << name(c);
    EXPECT_EQ(stats.p90, nearest_rank(90)) << name(c);
    EXPECT_EQ(stats.p99, nearest_rank(99)) << name(c);
  }
}

// stack_depth(id) after every access, for every id, against the distinct keys accessed since the
// id's latest access (a scan back), across compactions (few keys, long streams) and growth.
TEST(ReuseDistance, StackDepthIsTheDistinctKeysSinceTheLatestAccess) {
  std::uint64_t seed = 400;
  for (const StreamCase& c : kCases) {
    if (c.length * c.keys > 4'000'000) continue;  // quadratic check
    const auto stream = random_stream(c.length, c.keys, c.exponent, ++seed);
    ReuseDistanceCounter counter;
    for (std::size_t t = 0; t < stream.size(); ++t) {
      counter.access(static_cast<std::uint32_t>(stream[t]));
      if (t % 7 != 0 && t + 1 != stream.size()) continue;  // every 7th access, and the last
      for (std::int64_t id = 0; id < c.keys + 2; ++id) {
        std::int64_t expected = testing::kColdDistance;
        std::set<Key> since;
        for (std::size_t p = t + 1; p-- > 0;) {
          if (stream[p] == id) {
            expected = static_cast<std::int64_t>(since.size());
            break;
          }
          since.insert(stream[p]);
        }
        ASSERT_EQ(counter.stack_depth(static_cast<std::uint32_t>(id)), expected)
            << name(c) << ", after access " << t << ", id " << id;
      }
    }
  }
}

// access_all over batches of any length gives the distances and the summary of one access at a
// time (it reorders only the histogram's increments).
TEST(ReuseDistance, BatchesMatchOneAccessAtATime) {
  std::uint64_t seed = 500;
  for (const StreamCase& c : kCases) {
    const auto stream = random_stream(c.length, c.keys, c.exponent, ++seed);
    std::vector<std::int64_t> expected;
    const ReuseDistanceCounter one = replay(stream, &expected);
    ReuseDistanceCounter batched;
    std::vector<std::uint32_t> ids;
    std::vector<std::int64_t> distances;
    for (std::size_t at = 0, size = 1; at < stream.size(); at += size, size = size * 3 % 997 + 1) {
      const std::size_t n = std::min(size, stream.size() - at);
      ids.assign(stream.begin() + static_cast<std::ptrdiff_t>(at),
                 stream.begin() + static_cast<std::ptrdiff_t>(at + n));
      const std::size_t before = distances.size();
      distances.resize(before + n);
      batched.access_all(ids, std::span(distances).subspan(before));
    }
    EXPECT_EQ(distances, expected) << name(c);
    const ReuseDistanceStats a = one.summarize(), b = batched.summarize();
    EXPECT_EQ(b.histogram, a.histogram) << name(c);
    EXPECT_EQ(b.accesses, a.accesses) << name(c);
    for (const std::int64_t capacity : {1, 5, 64, 3000})
      EXPECT_EQ(batched.lru_hit_ratio(capacity), one.lru_hit_ratio(capacity));
  }
}

TEST(ReuseDistance, HandmadeStream) {
  // a b c a a d b: a's reuse sees {b, c} = 2, then 0; b's sees {c, a, d} = 3.
  const std::vector<Key> stream = {0, 1, 2, 0, 0, 3, 1};
  std::vector<std::int64_t> distances;
  const ReuseDistanceStats stats = replay(stream, &distances).summarize();
  EXPECT_EQ(distances, (std::vector<std::int64_t>{-1, -1, -1, 2, 0, -1, 3}));
  EXPECT_EQ(stats.cold, 4);
  EXPECT_EQ(stats.histogram, (std::vector<std::int64_t>{1, 0, 2}));  // 0 | [1, 2) | [2, 4) holds 2 and 3
  EXPECT_EQ(stats.median, 2);                                        // ranks of {0, 2, 3}: ceil(1.5) = 2nd
  EXPECT_EQ(stats.p99, 3);
  EXPECT_EQ(stats.lru_curve.size(), 3u);  // capacities 1, 2, 4 (4 >= 4 distinct keys)
  EXPECT_DOUBLE_EQ(stats.lru_curve[2].hit_ratio, 3.0 / 7.0);
}

TEST(ReuseDistance, EmptyCounterSummarizesToNothing) {
  const ReuseDistanceStats stats = ReuseDistanceCounter{}.summarize();
  EXPECT_EQ(stats.accesses, 0);
  EXPECT_TRUE(stats.histogram.empty());
  EXPECT_TRUE(stats.lru_curve.empty());
  EXPECT_EQ(stats.median, -1);
  EXPECT_EQ(ReuseDistanceCounter{}.lru_hit_ratio(8), 0.0);
}

}  // namespace
}  // namespace embscale::workloads
