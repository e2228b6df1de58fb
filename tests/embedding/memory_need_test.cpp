// The host memory a rank allocates at start (lib/embedding/memory_need.hpp), against the bytes
// written out from each scheme's placement: modulo rows counted key by key, whole tables summed,
// every row on every rank, column slices, a KV table's power-of-two buckets.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>

#include "config/config.hpp"
#include "embedding/memory_need.hpp"

namespace embscale::embedding {
namespace {

constexpr std::int64_t kSlotSizes[] = {1000, 333, 77, 5000};
constexpr std::int32_t kDim = 16;

config::Config config_with(const std::function<void(nlohmann::json&)>& edit) {
  auto j = nlohmann::json::parse(config::default_config_text());
  for (auto& layer : j["layers"]) {
    if (layer["type"] == "Data") {
      layer["slot_size_array"] = std::vector<std::int64_t>(std::begin(kSlotSizes), std::end(kSlotSizes));
      layer["sparse"][0]["slot_num"] = 4;
    } else {
      layer["sparse_embedding_hparam"]["embedding_vec_size"] = kDim;
      layer["sparse_embedding_hparam"]["max_vocabulary_size_per_gpu"] = 100000;
    }
  }
  edit(j);
  return config::parse_config(j, "t");
}

nlohmann::json& embedding_layer(nlohmann::json& j) {
  for (auto& layer : j["layers"])
    if (layer["type"] != "Data") return layer;
  throw std::logic_error("no embedding layer");
}

std::vector<double> bytes_of(const config::Config& config, int ranks) {
  const auto needs = host_memory_at_start(config, config.data.slot_size_array, ranks);
  EXPECT_EQ(needs.size(), 1u);
  return needs.empty() ? std::vector<double>{} : needs.front().bytes;
}

// Rows of the unified key space [0, vocabulary) with key % ranks == r, counted one by one.
std::int64_t modulo_rows_counted(int ranks, int r) {
  const std::int64_t vocabulary = std::accumulate(std::begin(kSlotSizes), std::end(kSlotSizes), std::int64_t{0});
  std::int64_t rows = 0;
  for (std::int64_t key = 0; key < vocabulary; ++key) rows += key % ranks == r ? 1 : 0;
  return rows;
}

TEST(MemoryNeed, ModuloPlacementChargesTheFullestRanksRowsOnEveryRank) {
  const auto config = config_with([](nlohmann::json&) {});  // All2AllDenseEmbedding, SGD, fp32
  for (const int ranks : {1, 2, 3, 4}) {
    std::int64_t most = 0;
    for (int r = 0; r < ranks; ++r) most = std::max(most, modulo_rows_counted(ranks, r));
    const auto bytes = bytes_of(config, ranks);
    ASSERT_EQ(bytes.size(), static_cast<std::size_t>(ranks));
    for (const double b : bytes) EXPECT_EQ(b, static_cast<double>(most) * kDim * 4) << ranks << " ranks";
  }
}

TEST(MemoryNeed, WholeTablesAreChargedToTheirOwnersOnly) {
  const auto config = config_with([](nlohmann::json& j) {
    embedding_layer(j)["type"] = "ShardedEmbedding";
    embedding_layer(j)["sharding"] = "table_wise";
  });
  for (const int ranks : {1, 2, 3, 5}) {
    const auto bytes = bytes_of(config, ranks);
    // Each table on exactly one rank: the ranks' bytes are sums of whole tables, adding up to all.
    const double all = 6410.0 * kDim * 4;
    EXPECT_EQ(std::accumulate(bytes.begin(), bytes.end(), 0.0), all) << ranks << " ranks";
    for (const double b : bytes) {
      bool is_a_sum_of_tables = false;
      for (int subset = 0; subset < 16; ++subset) {
        double sum = 0.0;
        for (int s = 0; s < 4; ++s)
          if (subset & (1 << s)) sum += static_cast<double>(kSlotSizes[s]) * kDim * 4;
        is_a_sum_of_tables |= sum == b;
      }
      EXPECT_TRUE(is_a_sum_of_tables) << b;
    }
    EXPECT_GE(*std::max_element(bytes.begin(), bytes.end()), 5000.0 * kDim * 4);
  }
}

TEST(MemoryNeed, DataParallelHoldsEveryRowWithItsOptimizerState) {
  const auto config = config_with([](nlohmann::json& j) {
    embedding_layer(j)["type"] = "ShardedEmbedding";
    embedding_layer(j)["sharding"] = "data_parallel";
    j["optimizer"] = {{"type", "Adam"}, {"update_type", "Global"}, {"adam_hparam", {{"learning_rate", 0.001}}}};
  });
  // Adam keeps m and v per value: 3 x dim values a row.
  for (const double b : bytes_of(config, 3)) EXPECT_EQ(b, 6410.0 * 3 * kDim * 4);
}

TEST(MemoryNeed, ColumnShardsStoreTheWidestSliceAndHalfPrecisionHalvesIt) {
  const auto config = config_with([](nlohmann::json& j) {
    embedding_layer(j)["type"] = "ShardedEmbedding";
    embedding_layer(j)["sharding"] = "column_wise";
    embedding_layer(j)["storage"] = {{"embedding_dtype", "fp16"}};
  });
  // 16 columns over 3 ranks: slices of 6, 5 and 5; every rank is charged the widest.
  for (const double b : bytes_of(config, 3)) EXPECT_EQ(b, 6410.0 * 6 * 2);
}

TEST(MemoryNeed, ADynamicTableIsItsInitialPowerOfTwoBuckets) {
  const auto config = config_with([](nlohmann::json& j) {
    embedding_layer(j)["storage"] = {
        {"type", "dynamic"}, {"init_capacity", 1000}, {"max_capacity", 100000}, {"bucket_capacity", 128}};
  });
  // 1000 slots round up to 8 buckets of 128; a slot is its key, digest, score (17 bytes) and row.
  for (const double b : bytes_of(config, 2)) EXPECT_EQ(b, 1024.0 * (17 + kDim * 4));
  const auto at_max = config_with([](nlohmann::json& j) {
    embedding_layer(j)["storage"] = {{"type", "dynamic"}, {"max_capacity", 3000}, {"bucket_capacity", 128}};
  });
  // init_capacity 0 starts at max_capacity: 3000 slots round up to 32 buckets.
  const auto needs = host_memory_at_start(at_max, at_max.data.slot_size_array, 1);
  EXPECT_EQ(needs.front().bytes.front(), 4096.0 * (17 + kDim * 4));
  EXPECT_NE(needs.front().sized_by.find("layers[emb1].storage.max_capacity (init_capacity 0)"), std::string::npos)
      << needs.front().sized_by;
}

TEST(MemoryNeed, ATwoTierTableKeepsRowsInMemoryOnlyUpToItsBudget) {
  const auto config = config_with([](nlohmann::json& j) {
    embedding_layer(j)["storage"] = {
        {"type", "dynamic"}, {"max_capacity", 65536}, {"bucket_capacity", 128}, {"global_hbm_for_values", 100000}};
  });
  for (const double b : bytes_of(config, 2)) EXPECT_EQ(b, 65536.0 * 17 + 100000.0);
}

// A parameter server's static shard holds the ids i % servers == its index, counted key by key
// here (the same count as modulo placement over the servers), with AdaGrad's state beside each
// row; a dynamic shard is its KV table on each server; the trainers hold no rows.
TEST(MemoryNeed, AParameterServersShardsAreOnItsServersOnly) {
  const auto served = [](const nlohmann::json& storage) {
    return config_with([&](nlohmann::json& j) {
      auto& layer = embedding_layer(j);
      layer["type"] = "ShardedEmbedding";
      layer["sharding"] = "parameter_server";
      layer["storage"] = storage;
      j["optimizer"] = {{"type", "AdaGrad"}, {"adagrad_hparam", {{"learning_rate", 0.05}}}};
      j["parameter_server"] = {{"servers", 3}};
    });
  };
  const auto config = served({{"type", "static"}});
  EXPECT_TRUE(host_memory_at_start(config, config.data.slot_size_array, 5).empty()) << "not the engine's";
  const auto needs = parameter_server_memory_at_start(config, config.data.slot_size_array, 5, 3);
  ASSERT_EQ(needs.size(), 1u);
  const auto& bytes = needs.front().bytes;
  ASSERT_EQ(bytes.size(), 5u);
  EXPECT_EQ(bytes[0], 0.0);
  EXPECT_EQ(bytes[1], 0.0);
  const double row = (kDim + kDim) * 4.0;  // AdaGrad: an accumulator per value
  for (int s = 0; s < 3; ++s)
    EXPECT_EQ(bytes[static_cast<std::size_t>(2 + s)], static_cast<double>(modulo_rows_counted(3, s)) * row)
        << "server " << s;
  const auto dynamic = served({{"type", "dynamic"}, {"max_capacity", 4096}, {"bucket_capacity", 128}});
  const auto kv = parameter_server_memory_at_start(dynamic, dynamic.data.slot_size_array, 4, 2).front().bytes;
  EXPECT_EQ(kv, (std::vector<double>{0.0, 0.0, 4096.0 * (17 + 2 * kDim * 4), 4096.0 * (17 + 2 * kDim * 4)}));
}

TEST(MemoryNeed, ParameterServerAndPlannedLayersAreNotTheEnginesToCharge) {
  const auto planned = config_with([](nlohmann::json& j) {
    embedding_layer(j)["type"] = "ShardedEmbedding";
    embedding_layer(j)["sharding"] = "auto";
  });
  EXPECT_TRUE(host_memory_at_start(planned, planned.data.slot_size_array, 2).empty());
}

}  // namespace
}  // namespace embscale::embedding
