// The dense layer types lib/model builds and those the config keeps (not in Config::not_run) are
// one list: a layer added to the registry and not to config::hugectr::built_dense_layer_types
// (or the reverse) fails here.
#include <gtest/gtest.h>

#include <algorithm>

#include "config/hugectr_names.hpp"
#include "model/layers/layer_registry.hpp"

namespace embscale::model {
namespace {

TEST(LayerRegistry, HoldsExactlyTheTypesTheConfigRuns) {
  std::vector<std::string> registered;
  for (const auto& e : layer_registry()) registered.push_back(e.type);
  std::vector<std::string> built = config::hugectr::built_dense_layer_types();
  std::sort(registered.begin(), registered.end());
  std::sort(built.begin(), built.end());
  EXPECT_EQ(registered, built);
  for (const auto& type : built) {
    const auto& known = config::hugectr::known_dense_layer_types();
    EXPECT_NE(std::find(known.begin(), known.end(), type), known.end()) << type << " is HugeCTR's";
  }
  ASSERT_NE(find_layer("BinaryCrossEntropyLoss"), nullptr);
  EXPECT_TRUE(find_layer("BinaryCrossEntropyLoss")->loss);
  EXPECT_EQ(find_layer("GRU"), nullptr);
}

}  // namespace
}  // namespace embscale::model
