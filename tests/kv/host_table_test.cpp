// HostTable against the reference model (reference_table.hpp) on randomized call sequences with
// fixed seeds: every score strategy and value type, small buckets so that growth, eviction and
// refusal all happen. After every call the outputs must match exactly (found flags, rows,
// scores, counts), and at the end the whole contents.
#include <gtest/gtest.h>

#include <random>
#include <tuple>

#include "kv/host_table.hpp"
#include "reference_table.hpp"

namespace embscale::kv {
namespace {

using testing::ReferenceTable;

// A clock that ticks once per reading: the table and the reference each own one and read it
// once per score-setting call, so their sequences agree.
std::function<std::uint64_t()> ticking_clock() {
  auto t = std::make_shared<std::uint64_t>(1000);
  return [t] { return *t += 7; };
}

TableOptions small_options(ScoreStrategy strategy, ValueType type) {
  TableOptions o;
  o.dim = 3;
  o.optimizer_state_width = 2;
  o.value_type = type;
  o.bucket_capacity = 16;
  o.init_capacity = 32;     // 2 buckets: growth happens
  o.max_capacity = 128;     // 8 buckets at most: eviction and refusal happen
  o.max_load_factor = 0.75;
  o.score_strategy = strategy;
  o.initializer.mode = InitializerMode::kUniform;
  o.seed = 42;
  return o;
}

std::vector<float> row_of(const std::vector<float>& rows, std::size_t i, std::size_t w) {
  return {rows.begin() + static_cast<long>(i * w), rows.begin() + static_cast<long>((i + 1) * w)};
}

// The whole contents, through export_batch over every slot, against the reference's entries.
void expect_same_contents(const HostTable& table, const ReferenceTable& reference) {
  std::vector<std::uint64_t> keys, scores;
  std::vector<float> values;
  ASSERT_EQ(table.export_batch(0, table.capacity(), keys, values, scores), table.size());
  const auto want = reference.entries();
  ASSERT_EQ(keys.size(), want.size());
  const auto w = static_cast<std::size_t>(table.row_width());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto it = want.find(keys[i]);
    ASSERT_NE(it, want.end()) << "key " << keys[i] << " is not in the reference";
    EXPECT_EQ(scores[i], it->second.score) << "key " << keys[i];
    EXPECT_EQ(row_of(values, i, w), it->second.row) << "key " << keys[i];
  }
}

// (strategy, value type, threads): with threads > 1 every call takes the partitioned parallel
// path (min_keys_for_threads = 1), which must give the one-key-at-a-time result exactly.
class Conformance : public ::testing::TestWithParam<std::tuple<ScoreStrategy, ValueType, int>> {};

TEST_P(Conformance, RandomCallsMatchTheReference) {
  const auto [strategy, type, threads] = GetParam();
  TableOptions options = small_options(strategy, type);
  options.clock = ticking_clock();
  HostTable table(options);
  table.set_execution_context({threads, 1});
  options.clock = ticking_clock();
  ReferenceTable reference(options);
  const auto w = static_cast<std::size_t>(table.row_width());
  ASSERT_EQ(static_cast<std::int64_t>(w), reference.width());

  std::mt19937_64 rng(20261122 + static_cast<int>(strategy) * 10 + static_cast<int>(type));
  std::uniform_int_distribution<std::uint64_t> key_of(0, 399);  // ~3x the maximum capacity
  std::uniform_real_distribution<float> value_of(-2.0f, 2.0f);
  std::uniform_int_distribution<std::uint64_t> score_of(0, 50);  // CUSTOMIZED: ties and refusals

  CallStats seen;  // what the sequence exercised, so that a passing run means something
  const auto initial_capacity = table.capacity();
  for (int call = 0; call < 400; ++call) {
    const std::size_t n = 1 + rng() % 24;
    std::vector<std::uint64_t> keys(n), scores(n);
    std::vector<float> values(n * w);
    std::vector<std::uint8_t> flags(n);
    for (auto& k : keys) k = key_of(rng);
    for (auto& v : values) v = value_of(rng);
    for (auto& s : scores) s = score_of(rng);
    for (auto& f : flags) f = static_cast<std::uint8_t>(rng() % 2);
    const std::span<const std::uint64_t> custom =
        strategy == ScoreStrategy::kCustomized && rng() % 4 ? std::span<const std::uint64_t>(scores)
                                                            : std::span<const std::uint64_t>();
    if (strategy == ScoreStrategy::kCustomized && custom.empty()) {
      table.set_score(call);
      reference.set_score(call);
    }
    if ((strategy == ScoreStrategy::kEpochLru || strategy == ScoreStrategy::kEpochLfu) && call % 100 == 99) {
      table.set_epoch(static_cast<std::uint32_t>(call / 100 + 1));
      reference.set_epoch(static_cast<std::uint32_t>(call / 100 + 1));
    }
    const int op = static_cast<int>(rng() % 9);
    SCOPED_TRACE("call " + std::to_string(call) + ", op " + std::to_string(op));
    CallStats got, want;
    switch (op) {
      case 0:
      case 1:
        got = table.insert_or_assign(keys, values, custom);
        want = reference.upsert(keys, values, custom, nullptr);
        break;
      case 2: {
        Evicted e_got, e_want;
        got = table.insert_and_evict(keys, values, custom, e_got);
        want = reference.upsert(keys, values, custom, &e_want);
        ASSERT_EQ(e_got.keys, e_want.keys);
        ASSERT_EQ(e_got.scores, e_want.scores);
        ASSERT_EQ(e_got.values, e_want.values);
        break;
      }
      case 3: {
        std::vector<float> out(n * w, -9.0f), want_out;
        std::vector<std::uint8_t> founds(n), want_founds;
        got = table.find_or_insert(keys, out, founds, custom);
        want = reference.find_or_insert(keys, want_out, want_founds, custom);
        ASSERT_EQ(founds, want_founds);
        ASSERT_EQ(out, want_out);
        break;
      }
      case 4: {
        std::vector<float> out(n * w, -9.0f);
        std::vector<std::uint8_t> founds(n);
        got = table.find_and_update(keys, out, founds);
        want = reference.find_and_update(keys);
        for (std::size_t i = 0; i < n; ++i) {
          const auto* e = reference.lookup(keys[i]);
          ASSERT_EQ(founds[i], e != nullptr) << i;
          if (e) {
            ASSERT_EQ(row_of(out, i, w), e->row) << i;
          }
        }
        break;
      }
      case 5:
        got = table.accum_or_assign(keys, values, flags, custom);
        want = reference.accum_or_assign(keys, values, flags, custom);
        break;
      case 6:
        if (rng() % 2) {
          got = table.assign(keys, values);
          want = reference.assign(keys, values);
        } else {
          got = table.assign_scores(keys, scores);
          want = reference.assign_scores(keys, scores);
        }
        break;
      case 7:
        got = table.erase(keys);
        want = reference.erase(keys);
        break;
      case 8: {  // entries put back with their own scores, whatever the strategy
        Evicted e_got, e_want;
        got = table.restore(keys, values, scores, &e_got);
        want = reference.restore(keys, values, scores, &e_want);
        ASSERT_EQ(e_got.keys, e_want.keys);
        ASSERT_EQ(e_got.scores, e_want.scores);
        ASSERT_EQ(e_got.values, e_want.values);
        break;
      }
    }
    ASSERT_EQ(got.found, want.found);
    ASSERT_EQ(got.inserted, want.inserted);
    ASSERT_EQ(got.evicted, want.evicted);
    ASSERT_EQ(got.refused, want.refused);
    ASSERT_EQ(table.size(), reference.size());
    ASSERT_EQ(table.capacity(), reference.capacity());
    seen.inserted += got.inserted;
    seen.evicted += got.evicted;
    seen.refused += got.refused;
    seen.found += got.found;
    if (call % 25 == 24) expect_same_contents(table, reference);
  }
  expect_same_contents(table, reference);
  EXPECT_GT(table.capacity(), initial_capacity) << "the table never grew";
  EXPECT_EQ(table.capacity(), 128) << "the table should reach max_capacity";
  EXPECT_GT(seen.evicted, 0) << "nothing was evicted";
  EXPECT_GT(seen.found, 0);
  if (strategy == ScoreStrategy::kCustomized || strategy == ScoreStrategy::kLfu) {
    EXPECT_GT(seen.refused, 0) << "no newcomer was refused";  // a warm bucket refuses score-1 keys
  }
  // find and contains agree with the contents on every key of the space, present or not.
  std::vector<std::uint64_t> all(400);
  for (std::uint64_t k = 0; k < all.size(); ++k) all[k] = k;
  std::vector<float> out(all.size() * w);
  std::vector<std::uint8_t> founds(all.size()), contained(all.size());
  std::vector<std::uint64_t> scores(all.size());
  table.find(all, out, founds, scores);
  table.contains(all, contained);
  EXPECT_EQ(founds, contained);
  for (std::size_t k = 0; k < all.size(); ++k) {
    const auto* e = reference.lookup(k);
    ASSERT_EQ(founds[k], e != nullptr) << k;
    if (!e) continue;
    EXPECT_EQ(scores[k], e->score) << k;
    EXPECT_EQ(row_of(out, k, w), e->row) << k;
  }
}

INSTANTIATE_TEST_SUITE_P(
    StrategiesAndTypes, Conformance,
    ::testing::Combine(::testing::Values(ScoreStrategy::kTimestamp, ScoreStrategy::kStep, ScoreStrategy::kCustomized,
                                         ScoreStrategy::kLfu, ScoreStrategy::kEpochLru, ScoreStrategy::kEpochLfu),
                       ::testing::Values(ValueType::kFloat32, ValueType::kFloat16, ValueType::kBFloat16),
                       ::testing::Values(1, 3)),
    [](const auto& test) {
      return to_string(std::get<0>(test.param)) + "_" + to_string(std::get<1>(test.param)) + "_threads" +
             std::to_string(std::get<2>(test.param));
    });

}  // namespace
}  // namespace embscale::kv
