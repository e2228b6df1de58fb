// The "parameter_server" section (lib/config/parameter_server_settings.cpp) and what a layer on
// parameter servers must be: defaults, the roles of a run, the per-trainer batch, and every refusal
// naming its JSON path.
#include <gtest/gtest.h>

#include "config/config.hpp"
#include "tests/config/config_test_support.hpp"

namespace embscale::config {
namespace {

using testing::error_of;
using testing::layer;

// The default config with emb1 on parameter servers (dynamic storage) and `section`.
nlohmann::json on_servers(nlohmann::json section) {
  auto json = testing::default_json();
  auto& emb = layer(json, "emb1");
  emb["type"] = "ShardedEmbedding";
  emb["sharding"] = "parameter_server";
  emb["storage"] = {{"type", "dynamic"}, {"max_capacity", 65536}};
  json["parameter_server"] = std::move(section);
  return json;
}

TEST(ConfigParameterServer, DefaultsAndRoles) {
  const Config c = parse_config(on_servers({{"servers", 2}}), "test.json");
  ASSERT_TRUE(c.parameter_server.has_value());
  EXPECT_TRUE(runs_on_parameter_servers(c));
  EXPECT_TRUE(c.parameter_server->synchronous);
  EXPECT_EQ(c.parameter_server->staleness, 0);
  EXPECT_TRUE(c.parameter_server->save_directory.empty());
  EXPECT_EQ(c.parameter_server->trainers_for(5), 3);  // every rank that is not a server
  EXPECT_EQ(batch_ranks(c, 5), 3);
}

TEST(ConfigParameterServer, FieldsAreRead) {
  const Config c = parse_config(on_servers({{"servers", 1},
                                            {"trainers", 3},
                                            {"mode", "asynchronous"},
                                            {"staleness", 4},
                                            {"save_directory", "out"},
                                            {"load_directory", "in"}}),
                                "test.json");
  const auto& p = *c.parameter_server;
  EXPECT_FALSE(p.synchronous);
  EXPECT_EQ(p.staleness, 4);
  EXPECT_EQ(p.trainers_for(7), 3);  // given: the run's count is checked against it at run time
  EXPECT_EQ(p.save_directory, "out");
  EXPECT_EQ(p.load_directory, "in");
}

TEST(ConfigParameterServer, PerRankBatchIsPerTrainer) {
  auto json = on_servers({{"servers", 1}});
  json["solver"].erase("batchsize");
  json["solver"]["batchsize_per_rank"] = 100;
  Config c = parse_config(json, "test.json");
  resolve_batch_for_ranks(c, 4);
  EXPECT_EQ(c.solver.batchsize, 300);  // 3 trainers
}

TEST(ConfigParameterServer, SectionIsIgnoredByOtherShardings) {
  auto json = on_servers({{"servers", 1}});
  layer(json, "emb1")["sharding"] = "all2all_dense";
  Config c = parse_config(json, "test.json");
  EXPECT_FALSE(runs_on_parameter_servers(c));
  EXPECT_EQ(batch_ranks(c, 4), 4);
}

TEST(ConfigParameterServer, RefusalsNameTheirPath) {
  const auto contains = [](const std::string& error, const std::string& part) {
    EXPECT_NE(error.find(part), std::string::npos) << error;
  };
  auto json = on_servers({{"servers", 1}});
  json.erase("parameter_server");
  contains(error_of(json),
           "layers[emb1].sharding: \"parameter_server\" needs the top-level \"parameter_server\" section");
  contains(error_of(on_servers({{"servers", 0}})), "parameter_server.servers");
  contains(error_of(on_servers(nlohmann::json::object())), "parameter_server.servers");
  contains(error_of(on_servers({{"servers", 1}, {"trainers", 0}})), "parameter_server.trainers");
  contains(error_of(on_servers({{"servers", 1}, {"mode", "lazy"}})), "parameter_server.mode");
  contains(error_of(on_servers({{"servers", 1}, {"staleness", 1}})),
           "parameter_server.staleness: a synchronous server applies each step's pushes");
  EXPECT_NO_THROW(parse_config(on_servers({{"servers", 1}, {"staleness", 0}}), "test.json"));
  contains(error_of(on_servers({{"servers", 1}, {"mode", "asynchronous"}, {"staleness", -1}})),
           "parameter_server.staleness");
  contains(error_of(on_servers({{"servers", 1}, {"save_directory", ""}})), "parameter_server.save_directory");
  contains(error_of(on_servers({{"servers", 1}, {"replicas", 2}})), "replicas");
  // Static storage runs (id % servers), with pulls as messages or one-sided; one-sided pulls need
  // it, in fp32, and it cannot be saved or loaded.
  json = on_servers({{"servers", 1}, {"pulls", "one_sided"}});
  layer(json, "emb1")["storage"] = {{"type", "static"}};
  EXPECT_NO_THROW(parse_config(json, "test.json"));
  contains(error_of(on_servers({{"servers", 1}, {"pulls", "one_sided"}})),
           "parameter_server.pulls: \"one_sided\" reads rows at addresses a trainer computes");
  contains(error_of(on_servers({{"servers", 1}, {"pulls", "rdma"}})), "parameter_server.pulls: expected");
  layer(json, "emb1")["storage"]["embedding_dtype"] = "fp16";
  contains(error_of(json), "layers[emb1].storage.embedding_dtype: one-sided pulls read fp32 rows");
  json = on_servers({{"servers", 1}, {"load_directory", "shards"}});
  layer(json, "emb1")["storage"] = {{"type", "static"}};
  contains(error_of(json), "parameter_server.load_directory: the servers save and load their shards as KV-table files");
  json = on_servers({{"servers", 1}});
  layer(json, "emb1")["storage"]["training"] = false;
  contains(error_of(json), "layers[emb1].storage.training");
}

}  // namespace
}  // namespace embscale::config
