// The "planner" section (lib/config/planner_settings.cpp) and the planner's layer fields: "auto"
// shardings and table_wise's "table_ranks", every refusal naming its JSON path.
#include <gtest/gtest.h>

#include "config/config.hpp"
#include "tests/config/config_test_support.hpp"

namespace embscale::config {
namespace {

using testing::error_of;
using testing::layer;

// The default config with emb1 a ShardedEmbedding layer of `sharding`.
nlohmann::json sharded(const std::string& sharding) {
  auto json = testing::default_json();
  auto& emb = layer(json, "emb1");
  emb["type"] = "ShardedEmbedding";
  emb["sharding"] = sharding;
  return json;
}

TEST(ConfigPlanner, AbsentSectionMeansNone) {
  const Config c = parse_config(sharded("auto"), "test.json");
  EXPECT_FALSE(c.planner.has_value());
  EXPECT_TRUE(is_auto_sharding(c.embeddings.front().sharding));
  EXPECT_TRUE(is_auto_sharding("auto_skew_blind"));
  EXPECT_FALSE(is_auto_sharding("row_wise"));
}

TEST(ConfigPlanner, FieldsAreRead) {
  auto json = sharded("auto");
  json["planner"] = {{"memory_per_rank", 1 << 30},
                     {"seconds_per_key", 1e-8},
                     {"seconds_per_row", 2e-8},
                     {"seconds_per_byte", 1e-10},
                     {"seconds_per_comm_byte", 3e-10},
                     {"seconds_per_collective", 1e-5},
                     {"schemes", {"row_wise", "table_wise"}},
                     {"all_layers", true}};
  const Config c = parse_config(json, "test.json");
  ASSERT_TRUE(c.planner.has_value());
  EXPECT_EQ(c.planner->memory_per_rank, 1 << 30);
  EXPECT_DOUBLE_EQ(c.planner->seconds_per_key.value_or(0), 1e-8);
  EXPECT_DOUBLE_EQ(c.planner->seconds_per_row.value_or(0), 2e-8);
  EXPECT_DOUBLE_EQ(c.planner->seconds_per_collective.value_or(0), 1e-5);
  EXPECT_EQ(c.planner->schemes, (std::vector<std::string>{"row_wise", "table_wise"}));
  EXPECT_TRUE(c.planner->all_layers);
  json["planner"] = nlohmann::json::object();
  EXPECT_FALSE(parse_config(json, "test.json").planner->seconds_per_key.has_value());
}

TEST(ConfigPlanner, BadFieldsNameTheirPath) {
  const auto with = [](nlohmann::json section) {
    auto json = sharded("auto");
    json["planner"] = std::move(section);
    return error_of(json);
  };
  EXPECT_NE(with({{"memory_per_rank", -1}}).find("planner.memory_per_rank"), std::string::npos);
  EXPECT_NE(with({{"seconds_per_key", 5}}).find("planner.seconds_per_key"), std::string::npos);
  EXPECT_NE(
      with({{"schemes", {"row_wise", "row_wise"}}}).find("planner.schemes[1]: expected a scheme not listed before"),
      std::string::npos)
      << with({{"schemes", {"row_wise", "row_wise"}}});
  EXPECT_NE(with({{"all_layers", 1}}).find("planner.all_layers"), std::string::npos);
  EXPECT_NE(with({{"budget", 1}}).find("budget"), std::string::npos);
}

TEST(ConfigPlanner, TableRanksBelongToTableWiseWithOneRankPerSlot) {
  auto json = sharded("table_wise");
  layer(json, "emb1")["table_ranks"] = {0, 1, 0, 1, 0, 1, 0, 1};
  EXPECT_EQ(parse_config(json, "test.json").embeddings.front().table_ranks,
            (std::vector<std::int32_t>{0, 1, 0, 1, 0, 1, 0, 1}));
  layer(json, "emb1")["table_ranks"] = {0, 1};
  EXPECT_NE(error_of(json).find("layers[emb1].table_ranks: expected one rank per slot of the layer (8 ranks)"),
            std::string::npos)
      << error_of(json);
  layer(json, "emb1")["table_ranks"] = {0, 1, 0, 1, 0, 1, 0, -1};
  EXPECT_NE(error_of(json).find("layers[emb1].table_ranks[7]"), std::string::npos) << error_of(json);
  auto row_wise = sharded("row_wise");
  layer(row_wise, "emb1")["table_ranks"] = {0, 1, 0, 1, 0, 1, 0, 1};
  EXPECT_NE(error_of(row_wise).find("\"table_ranks\" places the tables of a \"table_wise\" layer"), std::string::npos)
      << error_of(row_wise);
}

}  // namespace
}  // namespace embscale::config
