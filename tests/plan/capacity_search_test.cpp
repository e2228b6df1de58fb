// plan_capacity (the fewest ranks that meet the targets) against closed forms: with row_wise
// only, a rank's memory is the sum of its tables' row blocks, ceil(rows / P) rows of each at its
// row's bytes, so the fewest ranks under a budget is the smallest P whose blocks fit (found here
// by counting up, independently of the search's doubling and bisection). Also: the memory per
// rank never rises with the ranks, the headroom takes its share off the budget, a step target
// rejects the counts whose prediction misses it, and a missing budget or unreachable targets are
// bad input naming the field.
#include "plan/capacity_search.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace embscale::plan {
namespace {

const std::vector<std::int64_t> kRows = {400000, 90000, 5000, 1200};
constexpr std::int64_t kDim = 16;  // SGD: no optimizer state, fp32 rows of 64 bytes

config::Config row_wise_config(const std::string& planner) {
  std::string sizes;
  for (const auto rows : kRows) sizes += (sizes.empty() ? "" : ", ") + std::to_string(rows);
  const std::string text = R"({
    "schema_version": 1,
    "solver": {"batchsize": 4096, "max_iter": 10, "seed": 3},
    "optimizer": {"type": "SGD", "sgd_hparam": {"learning_rate": 0.05}},
    "planner": {"schemes": ["row_wise"])" +
                           (planner.empty() ? "" : ", " + planner) + R"(},
    "layers": [
      {"name": "data", "type": "Data", "format": "Synthetic", "slot_size_array": [)" +
                           sizes + R"(],
       "synthetic": {"key_distribution": "zipf", "zipf_alpha": 1.05, "nnz_per_slot": 2},
       "label": {"top": "label", "label_dim": 1}, "dense": {"top": "dense", "dense_dim": 1},
       "sparse": [{"top": "data1", "slot_num": 4}]},
      {"name": "emb1", "type": "ShardedEmbedding", "sharding": "auto", "bottom": "data1", "top": "emb1",
       "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 1000000, "embedding_vec_size": 16,
                                   "combiner": "sum"}}
    ]})";
  return config::parse_config_text(text, "capacity_search_test");
}

// The fullest rank's bytes under row blocks on `ranks` ranks.
double row_block_bytes(int ranks) {
  double bytes = 0.0;
  for (const auto rows : kRows) bytes += std::ceil(static_cast<double>(rows) / ranks) * kDim * 4.0;
  return bytes;
}

int fewest_ranks(double budget) {
  for (int ranks = 1;; ++ranks)
    if (row_block_bytes(ranks) <= budget) return ranks;
}

TEST(CapacitySearch, FindsTheFewestRanksWhoseRowBlocksFit) {
  for (const std::int64_t budget :
       {std::int64_t{40'000'000}, std::int64_t{5'000'000}, std::int64_t{2'100'000}, std::int64_t{333'333}}) {
    const auto answer = plan_capacity(row_wise_config(R"("memory_per_rank": )" + std::to_string(budget)));
    const int want = fewest_ranks(static_cast<double>(budget));
    EXPECT_EQ(answer.ranks, want) << "budget " << budget;
    EXPECT_EQ(answer.plan.ranks, want);
    EXPECT_NEAR(fullest_rank_bytes(answer.plan), row_block_bytes(want), 1e-6 * row_block_bytes(want));
    // Every count tried below the answer was rejected for memory, and the answer kept.
    for (const auto& c : answer.candidates) {
      EXPECT_EQ(c.kept, c.ranks >= want) << "budget " << budget << ", " << c.ranks << " ranks: " << c.reason;
      if (!c.kept) {
        EXPECT_NE(c.reason.find("no sharding plan fits"), std::string::npos) << c.reason;
      }
    }
  }
}

TEST(CapacitySearch, MemoryPerRankNeverRisesWithTheRanks) {
  const auto config = row_wise_config(R"("memory_per_rank": 1000000000)");
  double previous = std::numeric_limits<double>::infinity();
  for (int ranks = 1; ranks <= 40; ++ranks) {
    auto c = config;
    config::resolve_batch_for_ranks(c, ranks);
    const double bytes = fullest_rank_bytes(plan_sharding(c, ranks));
    EXPECT_LE(bytes, previous) << ranks << " ranks";
    previous = bytes;
  }
}

TEST(CapacitySearch, TheHeadroomComesOffTheBudget) {
  const auto answer = plan_capacity(row_wise_config(R"("memory_per_rank": 5000000, "memory_headroom": 0.4)"));
  EXPECT_EQ(answer.memory_per_rank, 3000000);
  EXPECT_EQ(answer.ranks, fewest_ranks(3000000.0));
}

TEST(CapacitySearch, AStepTargetRejectsTheCountsThatMissIt) {
  // The prediction at the memory-only answer, then a target just below it: a count that meets
  // memory but predicts a slower step is rejected for the step, by name.
  const auto memory_only = plan_capacity(row_wise_config(R"("memory_per_rank": 2100000)"));
  const double step = memory_only.plan.step_seconds;
  const auto answer = plan_capacity(row_wise_config(R"("memory_per_rank": 2100000, "target_step_seconds": )" +
                                                    std::to_string(step * 0.999) + R"(, "max_ranks": 4096)"));
  EXPECT_GT(answer.ranks, memory_only.ranks);
  EXPECT_LE(answer.plan.step_seconds, step * 0.999);
  bool named = false;
  for (const auto& c : answer.candidates)
    named = named || c.reason.find("above planner.target_step_seconds") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(CapacitySearch, AMissingBudgetOrUnreachableTargetsAreBadInput) {
  try {
    plan_capacity(row_wise_config(""));
    ADD_FAILURE() << "planned capacity without a budget";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("planner.memory_per_rank"), std::string::npos) << e.what();
  }
  try {
    plan_capacity(row_wise_config(R"("memory_per_rank": 1000, "max_ranks": 16)"));
    ADD_FAILURE() << "1000 bytes per rank held the tables on 16 ranks";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no rank count up to planner.max_ranks (16)"), std::string::npos) << what;
    EXPECT_NE(what.find("16 ranks: "), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace embscale::plan
