// The optimizers' rule table: one row per type, keys named once per row, and the defaults a config
// may leave out inside the ranges the same row accepts (so that a config giving only a learning
// rate is valid for every type).
#include "config/optimizer_rules.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "config/config.hpp"
#include "core/error.hpp"

namespace embscale::config {
namespace {

TEST(OptimizerRules, EveryTypeHasOneRowAndEveryNameOneType) {
  std::set<int> types;
  std::set<std::string> names;
  for (const auto& rules : optimizer_rules()) {
    EXPECT_TRUE(types.insert(static_cast<int>(rules.type)).second) << rules.name;
    EXPECT_TRUE(names.insert(rules.name).second) << rules.name;
    EXPECT_EQ(&rules_of(rules.type), &rules);
    EXPECT_EQ(find_optimizer_rules(rules.name), &rules);
    EXPECT_EQ(to_string(rules.type), rules.name);
  }
  EXPECT_EQ(types.size(), 6u);  // OptimizerType's values
  EXPECT_EQ(find_optimizer_rules("Ftrl"), nullptr);
  EXPECT_THROW(rules_of(static_cast<OptimizerType>(99)), Error);
}

TEST(OptimizerRules, EachRowNamesItsKeysOnceAndRequiresALearningRate) {
  for (const auto& rules : optimizer_rules()) {
    std::set<std::string> keys;
    int required = 0;
    for (const auto& parameter : rules.parameters) {
      EXPECT_TRUE(keys.insert(parameter.key).second) << rules.name << "." << parameter.key;
      EXPECT_NE(parameter.number == nullptr, parameter.flag == nullptr) << rules.name << "." << parameter.key;
      required += parameter.required ? 1 : 0;
    }
    EXPECT_EQ(keys.count("learning_rate"), 1u) << rules.name;
    EXPECT_EQ(required, 1) << rules.name;
  }
  EXPECT_TRUE(rules_of(OptimizerType::kAdam).lazy_global);
  EXPECT_FALSE(rules_of(OptimizerType::kAdaGrad).lazy_global);
}

TEST(OptimizerRules, DefaultsLieInsideTheirRanges) {
  for (const auto& rules : optimizer_rules()) {
    const Optimizer defaults;
    for (const auto& parameter : rules.parameters) {
      if (!parameter.number || parameter.required) continue;
      const double value = parameter.default_value.value_or(defaults.*parameter.number);
      EXPECT_TRUE(parameter.range.contains(value)) << rules.name << "." << parameter.key << " = " << value;
    }
  }
}

TEST(OptimizerRules, ParsingAppliesTheRowsDefaults) {
  const auto parse = [](const std::string& type, const std::string& block) {
    const std::string text = R"({"schema_version": 1, "solver": {"batchsize": 8, "max_iter": 1},
      "optimizer": {"type": ")" +
                             type + R"(", ")" + block + R"(": {"learning_rate": 0.5}},
      "layers": [{"name": "data", "type": "Data", "format": "Synthetic", "slot_size_array": [100],
                  "synthetic": {"nnz_per_slot": [1]}, "label": {"top": "label", "label_dim": 1},
                  "dense": {"top": "dense", "dense_dim": 1},
                  "sparse": [{"top": "d", "slot_num": 1}]},
                 {"name": "emb", "type": "DistributedSlotSparseEmbeddingHash", "bottom": "d", "top": "emb",
                  "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 100, "embedding_vec_size": 4,
                                              "combiner": "sum"}}]})";
    return parse_config_text(text, "optimizer_rules_test").optimizer;
  };
  EXPECT_DOUBLE_EQ(parse("AdaGrad", "adagrad_hparam").epsilon, 1e-7);         // HugeCTR's
  EXPECT_DOUBLE_EQ(parse("RowWiseAdaGrad", "adagrad_hparam").epsilon, 1e-8);  // FBGEMM's
  EXPECT_DOUBLE_EQ(parse("Adam", "adam_hparam").beta2, 0.999);
  EXPECT_DOUBLE_EQ(parse("SGD", "sgd_hparam").learning_rate, 0.5);
}

}  // namespace
}  // namespace embscale::config
