#include "config/config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "config/json_reader.hpp"
#include "core/error.hpp"

namespace embscale::config {
namespace {

nlohmann::json default_json() { return nlohmann::json::parse(default_config_text()); }

// The message of the InputError that parsing `json` throws ("" when it parses).
std::string error_of(const nlohmann::json& json) {
  try {
    parse_config(json, "test.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

nlohmann::json& layer(nlohmann::json& j, const std::string& name) {
  for (auto& l : j["layers"])
    if (l["name"] == name) return l;
  throw std::runtime_error("no layer " + name);
}

TEST(ConfigDefault, ParsesToTheDocumentedValues) {
  const Config c = default_config();
  EXPECT_EQ(c.schema_version, kSchemaVersion);
  EXPECT_EQ(c.solver.batchsize, 4096);
  EXPECT_EQ(c.solver.max_iter, 100);
  EXPECT_EQ(c.solver.warmup_iter, 5);
  EXPECT_EQ(c.solver.display, 20);
  EXPECT_EQ(c.data.format, "Synthetic");
  EXPECT_EQ(c.data.slot_num, 8);
  EXPECT_EQ(total_vocabulary(c.data), 800000);
  EXPECT_EQ(c.data.synthetic.distribution, KeyDistribution::kZipf);
  EXPECT_DOUBLE_EQ(c.data.synthetic.zipf_alpha, 1.05);
  ASSERT_EQ(c.embeddings.size(), 1u);
  EXPECT_EQ(c.embeddings[0].name, "emb1");
  EXPECT_EQ(c.embeddings[0].embedding_vec_size, 32);
  EXPECT_EQ(c.embeddings[0].combiner, Combiner::kSum);
  EXPECT_DOUBLE_EQ(c.embeddings[0].optimizer.learning_rate, 0.05);  // inherits the global optimizer
}

TEST(ConfigCombiner, AcceptsHugeCtrIntegersAndNames) {
  for (const auto& [value, expected] : std::vector<std::pair<nlohmann::json, Combiner>>{
           {0, Combiner::kSum}, {1, Combiner::kMean}, {"sum", Combiner::kSum}, {"mean", Combiner::kMean}}) {
    auto j = default_json();
    layer(j, "emb1")["sparse_embedding_hparam"]["combiner"] = value;
    EXPECT_EQ(parse_config(j, "t").embeddings[0].combiner, expected) << value;
  }
  auto j = default_json();
  layer(j, "emb1")["sparse_embedding_hparam"]["combiner"] = "max";
  EXPECT_EQ(error_of(j), "test.json: layers[emb1].sparse_embedding_hparam.combiner: expected 0, 1, \"sum\" or \"mean\", got \"max\"");
}

TEST(ConfigErrors, NameThePathWhatWasExpectedAndWhatCame) {
  auto j = default_json();
  j["solver"]["batchsize"] = "lots";
  EXPECT_EQ(error_of(j), "test.json: solver.batchsize: expected an integer >= 1, got \"lots\"");

  j = default_json();
  j["solver"]["max_iter"] = 0;
  EXPECT_EQ(error_of(j), "test.json: solver.max_iter: expected an integer >= 1, got 0");

  j = default_json();
  layer(j, "emb1")["sparse_embedding_hparam"]["embedding_vec_size"] = -3;
  EXPECT_EQ(error_of(j), "test.json: layers[emb1].sparse_embedding_hparam.embedding_vec_size: expected an integer in [1, 65536], got -3");

  j = default_json();
  j["optimizer"]["sgd_hparam"]["learning_rate"] = 0;
  EXPECT_EQ(error_of(j), "test.json: optimizer.sgd_hparam.learning_rate: expected a number > 0.0, got 0");

  j = default_json();
  layer(j, "data")["slot_size_array"][2] = 0;
  EXPECT_EQ(error_of(j), "test.json: layers[data].slot_size_array[2]: expected an integer >= 1, got 0");

  j = default_json();
  layer(j, "data")["sparse"][0]["slot_num"] = 7;
  EXPECT_NE(error_of(j).find("layers[data].sparse[0].slot_num: expected the number of entries of layers[data].slot_size_array (8), got 7"),
            std::string::npos) << error_of(j);

  j = default_json();
  j["solver"].erase("batchsize");
  EXPECT_EQ(error_of(j), "test.json: solver.batchsize: required key is missing");
}

TEST(ConfigErrors, UnknownKeysSuggestTheNearestKnownKey) {
  auto j = default_json();
  j["solver"]["batch_size"] = 4;
  EXPECT_EQ(error_of(j), "test.json: solver.batch_size: unknown key; did you mean \"batchsize\"?");
  j = default_json();
  layer(j, "emb1")["sparse_embedding_hparam"]["combinr"] = 0;
  EXPECT_NE(error_of(j).find("did you mean \"combiner\"?"), std::string::npos);
  j = default_json();
  j["solver"]["completely_different"] = 1;
  EXPECT_NE(error_of(j).find("unknown key; known keys:"), std::string::npos) << error_of(j);
}

TEST(ConfigErrors, LayerTypesUnknownAndNotYetRunnable) {
  auto j = default_json();
  layer(j, "emb1")["type"] = "All2AllDenseEmbeding";
  EXPECT_NE(error_of(j).find("layers[emb1].type: unknown layer type \"All2AllDenseEmbeding\"; did you mean \"All2AllDenseEmbedding\"?"),
            std::string::npos) << error_of(j);
  j = default_json();
  layer(j, "emb1")["type"] = "LocalizedSlotSparseEmbeddingHash";
  EXPECT_NE(error_of(j).find("is a HugeCTR layer this version does not run"), std::string::npos) << error_of(j);
  j = default_json();
  j["optimizer"]["type"] = "Adam";
  EXPECT_NE(error_of(j).find("optimizer.type: \"Adam\" is a HugeCTR optimizer embscale does not run yet"), std::string::npos);
  j = default_json();
  layer(j, "data")["format"] = "Parquet";
  EXPECT_NE(error_of(j).find("layers[data].format: the HugeCTR format \"Parquet\" is not read"), std::string::npos);
}

TEST(ConfigErrors, SchemaVersionAndStructure) {
  auto j = default_json();
  j["schema_version"] = 2;
  EXPECT_EQ(error_of(j), "test.json: schema_version: expected 1 (the only schema version this embscale reads), got 2");
  j = default_json();
  j["layers"][1]["name"] = "data";
  EXPECT_NE(error_of(j).find("layers[data].name: expected a name no other layer has"), std::string::npos) << error_of(j);
  j = default_json();
  layer(j, "emb1")["bottom"] = "nothing";
  EXPECT_NE(error_of(j).find("layers[emb1].bottom: expected the Data layer's sparse top \"data1\", got \"nothing\""), std::string::npos);
  EXPECT_NE(error_of(nlohmann::json::array()).find("(top level): expected an object"), std::string::npos);
}

// The column is that of the last character nlohmann-json read: the end of the offending token.
TEST(ConfigText, InvalidJsonGivesLineAndColumn) {
  try {
    parse_config_text("{\n  \"schema_version\": 1,\n  \"solver\": {\"batchsize\": 4 \"max_iter\": 1}\n}", "bad.json");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("bad.json:3:38: invalid JSON: syntax error", 0), 0u) << e.what();
  }
}

TEST(ConfigFile, MissingFileNamesIt) {
  try {
    load_config_file("/nonexistent/embscale.json");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/embscale.json: cannot open config file: No such file or directory");
  }
  const auto path = std::filesystem::temp_directory_path() / "embscale_config_test.json";
  std::ofstream(path) << default_config_text();
  EXPECT_EQ(load_config_file(path).solver.batchsize, 4096);
  std::filesystem::remove(path);
}

TEST(NearestKey, SuggestsOnlyLikelyTypos) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(nearest_key("max_iters", {"max_iter", "display"}), "max_iter");
  EXPECT_EQ(nearest_key("zzz", {"max_iter", "display"}), "");
}

}  // namespace
}  // namespace embscale::config
