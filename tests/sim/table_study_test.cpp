// TableStudy's recalls in a case small enough to follow by hand: a real KV table of one bucket
// (16 slots, LFU scores, no admission) and the calls below. Working, in (key: score):
//   call 1  keys 1..16        fill the bucket, all 1
//   call 2  keys 1..8         hits: 1..8 -> 2
//   call 3  keys 17..20       newcomers (1) evict the lowest (score, key): 9, 10, 11, 12
//   call 4  keys 9, 10        newcomers again for the table (1): evict 13, 14. The ideal score
//                             retention remembers their 1 and scores them as hits: 2; it too
//                             evicts 13 and 14 (the lowest) and so holds the same keys
//   call 5  keys 21, 22       the table evicts the lowest (1, 9) and (1, 10); the ideal holds 9
//                             and 10 at 2 and evicts (1, 15) and (1, 16) instead
// After call 5 the table holds 1..8, 15..22 and the ideal 1..10, 17..22: 14 keys in common of
// the ideal's 16, retention recall 14/16. Exact counts: 1..10 seen twice, 11..22 once, 22 keys.
// Hot share 0.1 -> the 2 hottest (ties by smaller key): 1, 2, both held. Share 0.5 -> 11: 1..10
// and 11, of which the table holds 1..8: 8/11.
#include "sim/table_study.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "kv/host_kv_table.hpp"

namespace embscale::sim {
namespace {

std::vector<std::int64_t> range(std::int64_t first, std::int64_t last) {
  std::vector<std::int64_t> keys(static_cast<std::size_t>(last - first + 1));
  std::iota(keys.begin(), keys.end(), first);
  return keys;
}

RecallSample run_hand_checked_case(double hot_key_share) {
  kv::TableOptions options;
  options.dim = 1;
  options.max_capacity = 16;
  options.bucket_capacity = 16;
  options.score_strategy = kv::ScoreStrategy::kLfu;
  kv::HostKvTable<std::int64_t> table(options);
  MeasuredTable measured{"emb1", 16, kv::ScoreStrategy::kLfu, [&](const std::function<void(std::int64_t)>& visit) {
                           kv::Entries<std::int64_t> entries;
                           table.export_batch(0, table.capacity(), entries);
                           for (const auto key : entries.keys) visit(key);
                         }};
  config::EvictionStudy options_of_study;
  options_of_study.oracles = config::kEvictionOracles;
  options_of_study.hot_key_share = hot_key_share;
  TableStudy study(measured, options_of_study);
  const std::vector<std::vector<std::int64_t>> calls = {range(1, 16), range(1, 8), range(17, 20), {9, 10}, {21, 22}};
  for (const auto& call : calls) {
    std::vector<float> rows(call.size());
    const kv::CallStats stats = table.find_or_insert(call, rows);
    study.on_call(call, {stats.found, stats.inserted, stats.evicted, stats.refused, stats.not_admitted});
    study.end_step(/*sample=*/true);
  }
  std::vector<std::int64_t> held;
  measured.resident([&](std::int64_t key) { held.push_back(key); });
  std::sort(held.begin(), held.end());
  std::vector<std::int64_t> expected = range(1, 8);
  for (const auto key : range(15, 22)) expected.push_back(key);
  EXPECT_EQ(held, expected);  // the table did what the working above says
  return study.samples().back();
}

TEST(TableStudy, RecallsMatchTheHandCheckedCase) {
  const RecallSample few = run_hand_checked_case(0.1);
  EXPECT_EQ(few.step, 4);
  EXPECT_EQ(few.retained, 14);
  EXPECT_EQ(few.ideal, 16);
  EXPECT_EQ(few.hot, 2);
  EXPECT_EQ(few.hot_held, 2);
  const RecallSample half = run_hand_checked_case(0.5);
  EXPECT_EQ(half.hot, 11);
  EXPECT_EQ(half.hot_held, 8);
}

TEST(TableStudy, StepFiguresAreTheCallsOutcomesAndTheOraclesHits) {
  kv::TableOptions options;
  options.dim = 1;
  options.max_capacity = 16;
  options.bucket_capacity = 16;
  options.score_strategy = kv::ScoreStrategy::kStep;
  config::EvictionStudy study_options;
  study_options.oracles = {"lru", "belady"};
  TableStudy study({"emb1", 16, kv::ScoreStrategy::kStep, [](const auto&) {}}, study_options);
  // Two calls in one step (20 new keys), then a step that reads keys 1..4 again.
  study.on_call(range(1, 8), {0, 8, 0, 0, 0});
  study.on_call(range(9, 20), {0, 12, 4, 0, 0});
  study.end_step(false);
  study.on_call(range(1, 4), {0, 4, 4, 0, 0});
  study.end_step(false);
  ASSERT_TRUE(study.run_belady());
  ASSERT_EQ(study.steps().size(), 2u);
  EXPECT_EQ(study.steps()[0].accesses, 20);
  EXPECT_EQ(study.steps()[0].table.inserts, 20);
  EXPECT_EQ(study.steps()[0].table.evictions, 4);
  EXPECT_EQ(study.steps()[1].accesses, 4);
  // LRU of 16 after keys 1..20: holds 5..20, so 1..4 miss. Belady keeps 1..4 (used again)
  // by not inserting four of 9..20 (never used again): 4 hits.
  EXPECT_EQ(study.steps()[1].oracle_hits[static_cast<std::size_t>(Oracle::kLru)], 0);
  EXPECT_EQ(study.steps()[1].oracle_hits[static_cast<std::size_t>(Oracle::kBelady)], 4);
  EXPECT_FALSE(study.has(Oracle::kLfu));
  EXPECT_TRUE(study.samples().empty());
}

}  // namespace
}  // namespace embscale::sim
