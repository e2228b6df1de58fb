// The planner's view of the schemes, derived from the scheme registry: which it chooses among and
// in which order, which it only predicts, and that a whole table's work falls on its owner.
#include "plan/scheme_cost.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace embscale::plan {
namespace {

TEST(SchemeCost, ChoosesAmongTheRegistrysChoosableSchemesByOwnership) {
  std::vector<std::string> names;
  for (const auto& model : planned_schemes()) {
    names.emplace_back(model.name);
    ASSERT_NE(model.entry, nullptr);
    EXPECT_TRUE(model.entry->planner && model.entry->planner->choosable) << model.name;
    EXPECT_EQ(choosable_scheme(model.name), &model);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"table_wise", "table_row_wise", "row_wise", "distributed_slot",
                                             "hot_replicated", "column_wise", "data_parallel"}));
  for (std::size_t i = 1; i < planned_schemes().size(); ++i)
    EXPECT_LT(planned_schemes()[i - 1].ownership, planned_schemes()[i].ownership);
}

TEST(SchemeCost, PredictsButNeverChoosesTheAliasesOfAPlacement) {
  const SchemeModel* localized = planned_scheme("localized_slot");
  ASSERT_NE(localized, nullptr);
  EXPECT_EQ(localized->ownership, Ownership::kOneRank);
  EXPECT_EQ(localized->collectives, planned_scheme("table_wise")->collectives);
  EXPECT_EQ(choosable_scheme("localized_slot"), nullptr);
  const SchemeModel* sparse = planned_scheme("distributed_sparse");
  ASSERT_NE(sparse, nullptr);
  EXPECT_EQ(sparse->ownership, planned_scheme("distributed_slot")->ownership);
  EXPECT_EQ(choosable_scheme("distributed_sparse"), nullptr);
  // Schemes without a planner model: not predicted.
  EXPECT_EQ(planned_scheme("all2all_dense"), nullptr);
}

TEST(SchemeCost, AWholeTablesOwnerDoesItsLookupsAndUpdates) {
  LayerShape shape;
  shape.samples = 64;
  shape.ranks = 4;
  shape.dim = 8;
  TableModel table;
  table.rows = 1000;
  table.bag_size = 2.0;
  const std::vector<RankLoad> loads = {{128.0, 50.0}};  // the owner's pairs and distinct keys
  std::vector<RankWork> work(4);
  add_table_work(*planned_scheme("table_wise"), shape, table, loads, 50.0, 2, work);
  for (int r = 0; r < 4; ++r) {
    // Every rank routes its own samples' pairs; only the owner looks rows up and updates them.
    EXPECT_DOUBLE_EQ(work[static_cast<std::size_t>(r)].row_ops, r == 2 ? 100.0 : 0.0) << "rank " << r;
    EXPECT_DOUBLE_EQ(work[static_cast<std::size_t>(r)].key_ops, 32.0 + (r == 2 ? 128.0 : 0.0)) << "rank " << r;
  }
}

// worthwhile_hot_rows replicates each row whose occurrences save more than its replication costs
// at the given rates; so, in the same cost model, the average rank's hot_replicated step is no
// slower at its answer than at half or twice as many hot rows, nor than with none.
TEST(SchemeCost, TheWorthwhileHotRowsMinimiseTheModelsStep) {
  LayerShape shape;
  shape.samples = 8192;
  shape.ranks = 8;
  shape.dim = 16;
  shape.state_width = 0;
  TableModel table;
  table.rows = 200'000;
  table.bag_size = 4.0;
  table.popularity = KeyPopularity::zipf(table.rows, 1.1);
  table.key_of_index = [](std::int64_t i) { return Key{i}; };  // the identity mapping from key 0
  CostParameters cost;
  cost.seconds_per_key = 20e-9;
  cost.seconds_per_row = 40e-9;
  cost.seconds_per_byte = 0.1e-9;
  cost.seconds_per_comm_byte = 0.5e-9;
  const std::int64_t hot = worthwhile_hot_rows(table, shape, cost);
  ASSERT_GT(hot, 0);
  ASSERT_LT(hot, table.rows);
  const auto mean_seconds = [&](std::int64_t rows) {
    table.hot_rows = rows;
    const auto loads = expected_loads(table, Ownership::kHotReplicas, shape.ranks, shape.samples);
    const double touched = expected_loads(table, Ownership::kHotReplicas, 1, shape.samples)[0].replica_distinct;
    std::vector<RankWork> work(static_cast<std::size_t>(shape.ranks));
    add_table_work(*planned_scheme("hot_replicated"), shape, table, loads, touched, 0, work);
    double total = 0.0;
    for (const auto& w : work) total += rank_seconds(w, cost);
    return total / shape.ranks;
  };
  const double best = mean_seconds(hot);
  EXPECT_LE(best, mean_seconds(hot / 2) * (1 + 1e-9));
  EXPECT_LE(best, mean_seconds(hot * 2) * (1 + 1e-9));
  EXPECT_LT(best, mean_seconds(0));
  // Nothing to replicate on one rank, and under a permuted mapping the first rows are not the hot ones.
  shape.ranks = 1;
  EXPECT_EQ(worthwhile_hot_rows(table, shape, cost), 0);
  shape.ranks = 8;
  table.identity_mapping = false;
  EXPECT_EQ(worthwhile_hot_rows(table, shape, cost), 0);
}

}  // namespace
}  // namespace embscale::plan
