// The "eviction" section (lib/config/eviction_study.cpp): defaults, the measured layers, and
// every refusal naming its JSON path.
#include <gtest/gtest.h>

#include "config/config.hpp"
#include "tests/config/config_test_support.hpp"

namespace embscale::config {
namespace {

using testing::error_of;
using testing::layer;

// The default config with its layer on dynamic storage (and a second, static layer when asked).
nlohmann::json dynamic_config() {
  auto json = testing::default_json();
  layer(json, "emb1")["storage"] = {{"type", "dynamic"}, {"max_capacity", 4096}};
  return json;
}

TEST(ConfigEviction, AbsentSectionMeansNoStudy) {
  EXPECT_FALSE(parse_config(dynamic_config(), "test.json").eviction.has_value());
}

TEST(ConfigEviction, DefaultsMeasureEveryDynamicLayerWithEveryOracle) {
  auto json = dynamic_config();
  json["eviction"] = nlohmann::json::object();
  const Config c = parse_config(json, "test.json");
  ASSERT_TRUE(c.eviction.has_value());
  EXPECT_EQ(c.eviction->layers, std::vector<std::string>{"emb1"});
  EXPECT_EQ(c.eviction->oracles, kEvictionOracles);
  EXPECT_EQ(c.eviction->sample_every, 50);
  EXPECT_DOUBLE_EQ(c.eviction->hot_key_share, 0.01);
}

TEST(ConfigEviction, OraclesAreKeptInCanonicalOrder) {
  auto json = dynamic_config();
  json["eviction"] = {
      {"oracles", {"belady", "lru"}}, {"sample_every", 3}, {"hot_key_share", 0.05}, {"belady_max_accesses", 1000}};
  const Config c = parse_config(json, "test.json");
  EXPECT_EQ(c.eviction->oracles, (std::vector<std::string>{"lru", "belady"}));
  EXPECT_EQ(c.eviction->sample_every, 3);
  EXPECT_DOUBLE_EQ(c.eviction->hot_key_share, 0.05);
  EXPECT_EQ(c.eviction->belady_max_accesses, 1000);
}

TEST(ConfigEviction, StaticStorageIsRefusedWithTheReason) {
  auto json = testing::default_json();  // emb1 static
  json["eviction"] = nlohmann::json::object();
  const std::string error = error_of(json);
  EXPECT_NE(error.find("test.json: eviction: no embedding layer can be measured"), std::string::npos) << error;
  EXPECT_NE(error.find("layers[emb1]: its storage is static"), std::string::npos) << error;

  json["eviction"] = {{"layers", {"emb1"}}};
  EXPECT_NE(error_of(json).find("eviction.layers[0]: layer \"emb1\" cannot be measured: its storage is static"),
            std::string::npos)
      << error_of(json);
}

TEST(ConfigEviction, HybridModeIsRefusedAndCachingAccepted) {
  auto json = dynamic_config();
  layer(json, "emb1")["storage"]["global_hbm_for_values"] = 1 << 20;
  json["eviction"] = {{"layers", {"emb1"}}};
  EXPECT_NE(error_of(json).find("hybrid mode"), std::string::npos) << error_of(json);
  layer(json, "emb1")["storage"]["caching"] = true;
  EXPECT_EQ(error_of(json), "");
}

TEST(ConfigEviction, BadFieldsNameTheirPath) {
  const auto with = [](nlohmann::json section) {
    auto json = dynamic_config();
    json["eviction"] = std::move(section);
    return error_of(json);
  };
  EXPECT_NE(with({{"layers", {"emb9"}}}).find("eviction.layers[0]: expected the name of an embedding layer"),
            std::string::npos);
  EXPECT_NE(with({{"layers", {"emb1", "emb1"}}}).find("eviction.layers[1]: expected a layer not listed before"),
            std::string::npos);
  EXPECT_NE(with({{"layers", nlohmann::json::array()}}).find("eviction.layers"), std::string::npos);
  EXPECT_NE(with({{"oracles", {"fifo"}}}).find("eviction.oracles[0]: expected \"lru\", \"lfu\""), std::string::npos)
      << with({{"oracles", {"fifo"}}});
  EXPECT_NE(with({{"oracles", {"lru", "lru"}}}).find("eviction.oracles[1]"), std::string::npos);
  EXPECT_NE(with({{"sample_every", 0}}).find("eviction.sample_every: expected an integer >= 1"), std::string::npos);
  EXPECT_NE(with({{"hot_key_share", 1.5}}).find("eviction.hot_key_share"), std::string::npos);
  EXPECT_NE(with({{"belady_max_accesses", 0}}).find("eviction.belady_max_accesses"), std::string::npos);
  EXPECT_NE(with({{"sample_evry", 3}}).find("eviction.sample_evry: unknown key; did you mean \"sample_every\"?"),
            std::string::npos)
      << with({{"sample_evry", 3}});
}

}  // namespace
}  // namespace embscale::config
