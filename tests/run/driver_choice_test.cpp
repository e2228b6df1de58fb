// The run's one warning about refused keys (run/driver_choice.hpp): printed once, on rank 0, when
// the dynamic tables refused keys and a layer asked to be warned; silent otherwise.
#include "run/driver_choice.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

namespace embscale::run {
namespace {

config::Config config_with(kv::SafeCheck emb1, kv::SafeCheck emb2) {
  config::Config config;
  for (const auto& [name, mode] : {std::pair{"emb1", emb1}, std::pair{"emb2", emb2}}) {
    config::EmbeddingLayer layer;
    layer.name = name;
    layer.storage.dynamic = true;
    layer.storage.table.safe_check = mode;
    config.embeddings.push_back(layer);
  }
  return config;
}

std::string warning(const config::Config& config, std::int64_t refused, int rank) {
  RunSummary summary;
  summary.refused_keys = refused;
  std::ostringstream err;
  warn_of_refused_keys(config, summary, rank, err);
  return err.str();
}

TEST(RefusedKeysWarning, OneLineOnRankZeroNamingTheWarningLayers) {
  const auto config = config_with(kv::SafeCheck::kIgnore, kv::SafeCheck::kWarning);
  const std::string line = warning(config, 1234, 0);
  EXPECT_EQ(line.find("embscale: warning: the dynamic tables could not insert 1234 keys"), 0u) << line;
  EXPECT_NE(line.find("safe_check_mode WARNING in emb2)"), std::string::npos) << line;
  EXPECT_EQ(line.find("emb1"), std::string::npos) << line;
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
  EXPECT_EQ(warning(config, 1234, 1), "");  // the other ranks stay silent
}

TEST(RefusedKeysWarning, SilentWithoutRefusalsOrWithoutAWarningLayer) {
  EXPECT_EQ(warning(config_with(kv::SafeCheck::kWarning, kv::SafeCheck::kWarning), 0, 0), "");
  EXPECT_EQ(warning(config_with(kv::SafeCheck::kIgnore, kv::SafeCheck::kIgnore), 99, 0), "");
  auto static_layer = config_with(kv::SafeCheck::kWarning, kv::SafeCheck::kIgnore);
  static_layer.embeddings[0].storage.dynamic = false;  // a static table refuses nothing to warn of
  EXPECT_EQ(warning(static_layer, 99, 0), "");
}

}  // namespace
}  // namespace embscale::run
