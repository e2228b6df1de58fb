// What a valid config parses to: the embedded default's values, defaults of optional fields,
// HugeCTR's combiner spellings, the per-layer optimizer.
#include "config/config.hpp"

#include <gtest/gtest.h>

#include "config_test_support.hpp"

namespace embscale::config {
namespace {

using testing::default_json;
using testing::error_of;
using testing::layer;

TEST(ConfigDefault, ParsesToTheValuesOfDefaultJson) {
  const Config c = default_config();
  EXPECT_EQ(c.schema_version, kSchemaVersion);
  EXPECT_EQ(c.solver.batchsize, 4096);
  EXPECT_EQ(c.solver.max_iter, 100);
  EXPECT_EQ(c.solver.warmup_iter, 5);
  EXPECT_EQ(c.solver.display, 20);
  EXPECT_EQ(c.solver.seed, 20261122u);
  EXPECT_EQ(c.optimizer.type, OptimizerType::kSGD);
  EXPECT_EQ(c.optimizer.update_type, UpdateType::kLocal);
  EXPECT_DOUBLE_EQ(c.optimizer.learning_rate, 0.05);

  EXPECT_EQ(c.data.name, "data");
  EXPECT_EQ(c.data.format, DataFormat::kSynthetic);
  EXPECT_EQ(c.data.slot_size_array, std::vector<std::int64_t>(8, 100000));
  EXPECT_EQ(c.data.slot_num, 8);
  EXPECT_EQ(c.data.label_dim, 1);
  EXPECT_EQ(c.data.dense_dim, 13);
  EXPECT_EQ(c.data.sparse_top, "data1");
  ASSERT_EQ(c.data.synthetic.slots.size(), 8u);
  for (const auto& slot : c.data.synthetic.slots) {
    EXPECT_EQ(slot.keys.distribution, KeyDistribution::kZipf);
    EXPECT_DOUBLE_EQ(slot.keys.zipf_alpha, 1.05);
    EXPECT_EQ(slot.nnz, 4);
  }
  EXPECT_EQ(total_vocabulary(c.data), 800000);

  ASSERT_EQ(c.embeddings.size(), 1u);
  const auto& e = c.embeddings[0];
  EXPECT_EQ(e.name, "emb1");
  EXPECT_EQ(e.type, "All2AllDenseEmbedding");
  EXPECT_EQ(e.bottom, "data1");
  EXPECT_EQ(e.top, "emb1");
  EXPECT_EQ(e.max_vocabulary_size_per_gpu, 800000);
  EXPECT_EQ(e.embedding_vec_size, 32);
  EXPECT_EQ(e.combiner, Combiner::kSum);
  EXPECT_DOUBLE_EQ(e.optimizer.learning_rate, 0.05);  // no optimizer of its own: the global one
  EXPECT_EQ(c.source, default_json());                // the JSON as given, for the report
}

TEST(ConfigDefault, OptionalFieldsTakeTheirDocumentedDefaults) {
  auto j = default_json();
  for (const auto* key : {"warmup_iter", "display", "seed"}) j["solver"].erase(key);
  auto& data = layer(j, "data");
  data.erase("synthetic");
  data.erase("label");
  data.erase("dense");
  const Config c = parse_config(j, "t");
  EXPECT_EQ(c.solver.warmup_iter, 0);
  EXPECT_EQ(c.solver.display, 0);
  EXPECT_EQ(c.solver.seed, 0u);
  for (const auto& slot : c.data.synthetic.slots) {
    EXPECT_EQ(slot.keys.distribution, KeyDistribution::kZipf);
    EXPECT_DOUBLE_EQ(slot.keys.zipf_alpha, 1.05);
    EXPECT_EQ(slot.nnz, 1);
    EXPECT_EQ(slot.nnz_distribution, NnzDistribution::kFixed);
    EXPECT_EQ(slot.bag_keys, BagKeys::kAny);
    EXPECT_EQ(slot.mapping, KeyMapping::kIdentity);
    EXPECT_EQ(slot.drift.period, 0);
    EXPECT_EQ(slot.growth.keys_per_iteration, 0);
  }
  EXPECT_EQ(c.data.label_dim, 1);
  EXPECT_EQ(c.data.dense_dim, 0);
}

TEST(ConfigDefault, SeedTakesTheWholeUnsignedRange) {
  auto j = default_json();
  j["solver"]["seed"] = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(parse_config(j, "t").solver.seed, std::numeric_limits<std::uint64_t>::max());
}

TEST(ConfigCombiner, AcceptsHugeCtrIntegersAndNames) {
  const std::vector<std::pair<nlohmann::json, Combiner>> cases = {
      {0, Combiner::kSum}, {1, Combiner::kMean}, {"sum", Combiner::kSum}, {"mean", Combiner::kMean}};
  for (const auto& [value, expected] : cases) {
    auto j = default_json();
    layer(j, "emb1")["sparse_embedding_hparam"]["combiner"] = value;
    EXPECT_EQ(parse_config(j, "t").embeddings[0].combiner, expected) << value;
  }
}

TEST(ConfigCombiner, RejectsOtherValuesNamingTheLayer) {
  for (const nlohmann::json& value : {nlohmann::json("max"), nlohmann::json(2), nlohmann::json(0.0)}) {
    auto j = default_json();
    layer(j, "emb1")["sparse_embedding_hparam"]["combiner"] = value;
    EXPECT_EQ(error_of(j),
              "test.json: layers[emb1].sparse_embedding_hparam.combiner: expected 0, 1, \"sum\" or "
              "\"mean\", got " +
                  value.dump());
  }
}

TEST(ConfigCombiner, ToStringNamesMatchTheConfigSpelling) {
  EXPECT_EQ(to_string(Combiner::kSum), "sum");
  EXPECT_EQ(to_string(Combiner::kMean), "mean");
  EXPECT_EQ(to_string(KeyDistribution::kZipf), "zipf");
  EXPECT_EQ(to_string(KeyDistribution::kUniform), "uniform");
}

TEST(ConfigSynthetic, UniformDistributionAndNnz) {
  auto j = default_json();
  layer(j, "data")["synthetic"] = {{"key_distribution", "uniform"}, {"nnz_per_slot", 3}};
  const Config c = parse_config(j, "t");
  for (const auto& slot : c.data.synthetic.slots) {
    EXPECT_EQ(slot.keys.distribution, KeyDistribution::kUniform);
    EXPECT_EQ(slot.nnz, 3);
  }
}

TEST(ConfigEmbedding, PerLayerOptimizerOverridesTheGlobalOne) {
  auto j = default_json();
  auto second = layer(j, "emb1");
  second["name"] = "emb2";
  second["top"] = "emb2";
  second["optimizer"] = {{"type", "Adam"}, {"update_type", "LazyGlobal"}, {"adam_hparam", {{"learning_rate", 0.5}}}};
  j["layers"].push_back(second);
  const Config c = parse_config(j, "t");
  ASSERT_EQ(c.embeddings.size(), 2u);
  EXPECT_EQ(c.embeddings[0].optimizer.type, OptimizerType::kSGD);
  EXPECT_DOUBLE_EQ(c.embeddings[0].optimizer.learning_rate, 0.05);
  EXPECT_EQ(c.embeddings[1].optimizer.type, OptimizerType::kAdam);
  EXPECT_EQ(c.embeddings[1].optimizer.update_type, UpdateType::kLazyGlobal);
  EXPECT_DOUBLE_EQ(c.embeddings[1].optimizer.learning_rate, 0.5);
  EXPECT_EQ(c.embeddings[1].name, "emb2");
}

// Every option of storage.admission reaches the KV table's options, FREQUENCY among the
// strategies (lib/config/README.md's storage table).
TEST(ConfigEmbedding, DynamicStorageTakesEveryAdmissionOption) {
  auto j = default_json();
  layer(j, "emb1")["storage"] = {{"type", "dynamic"},
                                 {"max_capacity", 65536},
                                 {"score_strategy", "FREQUENCY"},
                                 {"admission",
                                  {{"strategy", "tiny_lfu"},
                                   {"threshold", 3},
                                   {"max_count", 255},
                                   {"depth", 2},
                                   {"cells_per_slot", 8},
                                   {"aging_factor", 160},
                                   {"conservative_update", true}}}};
  const kv::TableOptions& t = parse_config(j, "t").embeddings.at(0).storage.table;
  EXPECT_EQ(t.score_strategy, kv::ScoreStrategy::kFrequency);
  EXPECT_EQ(t.admission.kind, kv::AdmissionOptions::Kind::kTinyLfu);
  EXPECT_EQ(t.admission.threshold_k, 3);
  EXPECT_EQ(t.admission.max_count, 255);
  EXPECT_EQ(t.admission.depth, 2);
  EXPECT_DOUBLE_EQ(t.admission.cells_per_slot, 8.0);
  EXPECT_DOUBLE_EQ(t.admission.aging_factor, 160.0);
  EXPECT_TRUE(t.admission.conservative_update);
  layer(j, "emb1")["storage"]["admission"] = {{"strategy", "k_count"}};
  const kv::AdmissionOptions defaults = parse_config(j, "t").embeddings.at(0).storage.table.admission;
  EXPECT_EQ(defaults.kind, kv::AdmissionOptions::Kind::kKCount);
  EXPECT_FALSE(defaults.conservative_update);
  EXPECT_EQ(defaults.max_count, kv::AdmissionOptions{}.max_count);
}

TEST(ConfigEmbedding, LayerOrderDoesNotMatter) {
  auto j = default_json();
  std::swap(j["layers"][0], j["layers"][1]);  // embedding before the Data layer
  const Config c = parse_config(j, "t");
  EXPECT_EQ(c.data.name, "data");
  EXPECT_EQ(c.embeddings.at(0).bottom, c.data.sparse_top);
}

// HugeCTR's several sparse inputs (WDL's wide and deep): each layer reads its bottom's slots.
TEST(ConfigEmbedding, SparseInputsGiveEachLayerItsSlots) {
  auto j = default_json();
  auto& data = layer(j, "data");
  data["sparse"] = {{{"top", "wide"}, {"slot_num", 2}}, {{"top", "deep"}, {"slot_num", 6}}};
  layer(j, "emb1")["bottom"] = "deep";
  auto second = layer(j, "emb1");
  second["name"] = "emb2";
  second["top"] = "emb2";
  second["bottom"] = "wide";
  second["slots"] = {1};
  j["layers"].push_back(second);
  const Config c = parse_config(j, "t");
  ASSERT_EQ(c.data.sparse_inputs.size(), 2u);
  EXPECT_EQ(c.data.slot_num, 8);
  EXPECT_EQ(c.embeddings[0].slots, (std::vector<std::int32_t>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(c.embeddings[1].slots, (std::vector<std::int32_t>{1}));
  second["slots"] = {1, 2};  // slot 2 is the deep input's
  j["layers"][2] = second;
  try {
    parse_config(j, "t");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "t: layers[emb2].slots: expected slot indices of its bottom \"wide\": [0, 2), got [1,2]");
  }
}

TEST(ConfigTotalVocabulary, SumsSlotSizes) {
  DataLayer d;
  d.slot_size_array = {3, 5, 7};
  EXPECT_EQ(total_vocabulary(d), 15);
  EXPECT_EQ(total_vocabulary(DataLayer{}), 0);
}

TEST(ConfigSolver, BatchsizePerRankScalesWithTheRanks) {
  auto j = default_json();
  j["solver"].erase("batchsize");
  j["solver"]["batchsize_per_rank"] = 1000;
  Config c = parse_config(j, "t");
  EXPECT_EQ(c.solver.batchsize_per_rank, 1000);
  resolve_batch_for_ranks(c, 4);
  EXPECT_EQ(c.solver.batchsize, 4000);
  Config strong = default_config();
  resolve_batch_for_ranks(strong, 4);
  EXPECT_EQ(strong.solver.batchsize, 4096);  // a global batch stays as given
  c.solver.batchsize_per_rank = std::int64_t{1} << 62;
  EXPECT_THROW(resolve_batch_for_ranks(c, 4), InputError);
  j["solver"]["batchsize"] = 10;
  EXPECT_EQ(error_of(j),
            "test.json: solver.batchsize_per_rank: give batchsize (the global batch: strong scaling) or "
            "batchsize_per_rank (weak scaling), not both");
}

}  // namespace
}  // namespace embscale::config
