// The scheme registry's entries and the capabilities the rest of the code reads from them (the
// engine's field checks, the step capture, the planner): each capability is held to the schemes
// that have it, so that a changed entry is a changed behaviour someone decided on.
#include "embedding/scheme_registry.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace embscale::embedding {
namespace {

std::set<std::string> names_where(bool (*has)(const SchemeEntry&)) {
  std::set<std::string> names;
  for (const auto& entry : schemes())
    if (has(entry)) names.insert(entry.name);
  return names;
}

TEST(SchemeRegistry, EveryEntryIsCompleteAndNamedOnce) {
  std::set<std::string> names;
  for (const auto& entry : schemes()) {
    ASSERT_NE(entry.name, nullptr);
    EXPECT_NE(entry.config_type, nullptr) << entry.name;
    EXPECT_NE(entry.origin, nullptr) << entry.name;
    EXPECT_NE(entry.make, nullptr) << entry.name;
    EXPECT_TRUE(names.insert(entry.name).second) << entry.name << " registered twice";
    EXPECT_EQ(find_scheme(entry.name), &entry);
  }
  EXPECT_EQ(names.size(), 10u);
  EXPECT_EQ(find_scheme("no_such_scheme"), nullptr);
}

TEST(SchemeRegistry, CapabilitiesBelongToTheSchemesThatHaveThem) {
  EXPECT_EQ(names_where([](const SchemeEntry& e) { return e.dedups_before_exchange; }),
            (std::set<std::string>{"all2all_dense", "data_parallel"}));
  EXPECT_EQ(names_where([](const SchemeEntry& e) { return e.places_ranks_in_nodes; }),
            (std::set<std::string>{"table_row_wise"}));
  EXPECT_EQ(names_where([](const SchemeEntry& e) { return e.table_owners != nullptr; }),
            (std::set<std::string>{"table_wise", "localized_slot"}));
  EXPECT_EQ(names_where([](const SchemeEntry& e) { return !e.planner.has_value(); }),
            (std::set<std::string>{"all2all_dense"}));
  EXPECT_EQ(names_where([](const SchemeEntry& e) { return e.splits_key_spaces; }),
            (std::set<std::string>{"row_wise", "table_row_wise", "hot_replicated"}));
  EXPECT_EQ(names_where([](const SchemeEntry& e) { return e.planner && e.planner->static_only; }),
            (std::set<std::string>{"column_wise", "data_parallel", "hot_replicated"}));
  // A GPU step: every scheme but hot_replicated (the owner-pooled ones through
  // DevicePooledExchange, all2all_dense and data_parallel through their device flows).
  EXPECT_EQ(names_where([](const SchemeEntry& e) { return !e.runs_on_device; }),
            (std::set<std::string>{"hot_replicated"}));
}

TEST(SchemeRegistry, WholeTableSchemesSayWhereEachTableLives) {
  for (const auto& entry : schemes()) {
    if (!entry.planner || entry.planner->ownership != Ownership::kOneRank) continue;
    EXPECT_NE(entry.table_owners, nullptr) << entry.name << ": a whole-table scheme must place its tables";
  }
  config::EmbeddingLayer layer;
  layer.name = "emb";
  layer.embedding_vec_size = 4;
  LayerSpec spec;
  spec.config = &layer;
  spec.slot_sizes = {10, 500, 30, 200, 7};
  // HugeCTR's localized slots: slot s on rank s % ranks.
  EXPECT_EQ(find_scheme("localized_slot")->table_owners(spec, 3), (std::vector<int>{0, 1, 2, 0, 1}));
  // TorchRec's table-wise: the config's table_ranks when given, else the largest table first onto
  // the least loaded rank (ties to the lowest).
  EXPECT_EQ(find_scheme("table_wise")->table_owners(spec, 2), (std::vector<int>{1, 0, 1, 1, 1}));
  layer.table_ranks = {1, 1, 0, 0, 1};
  EXPECT_EQ(find_scheme("table_wise")->table_owners(spec, 2), (std::vector<int>{1, 1, 0, 0, 1}));
}

TEST(SchemeRegistry, NamesWhereReadAsProse) {
  EXPECT_EQ(scheme_names_where([](const SchemeEntry& e) { return e.places_ranks_in_nodes; }), "table_row_wise");
  EXPECT_EQ(scheme_names_where([](const SchemeEntry& e) { return e.dedups_before_exchange; }),
            "all2all_dense and data_parallel");
  EXPECT_EQ(scheme_names_where([](const SchemeEntry& e) { return e.table_owners != nullptr; }),
            "localized_slot and table_wise");
  EXPECT_EQ(scheme_names_where([](const SchemeEntry& e) { return e.planner && e.planner->collectives == 4; }),
            "distributed_slot, distributed_sparse, localized_slot, table_wise, row_wise and column_wise");
}

TEST(SchemeRegistry, ALayerFindsItsSchemeByTypeOrSharding) {
  config::EmbeddingLayer layer;
  layer.name = "emb";
  layer.type = "LocalizedSlotSparseEmbeddingHash";
  EXPECT_STREQ(scheme_of(layer).name, "localized_slot");
  layer.type = kShardedEmbedding;
  layer.sharding = "distributed_sparse";  // any scheme's name, SOK's and HugeCTR's too
  EXPECT_STREQ(scheme_of(layer).name, "distributed_sparse");
  layer.sharding = "row_wize";
  EXPECT_THROW(scheme_of(layer), InputError);
}

}  // namespace
}  // namespace embscale::embedding
