// A config's file fields rebased from one directory to another (config/config_paths.hpp): each
// still names the same file from the new directory.
#include "config/config_paths.hpp"

#include <gtest/gtest.h>

namespace embscale::config {
namespace {

nlohmann::json config_naming(const std::string& source, const std::string& hardware, const std::string& saves) {
  return {{"layers", {{{"name", "data"}, {"type", "Data"}, {"source", source}}, {{"name", "emb1"}, {"type", "X"}}}},
          {"planner", {{"hardware", hardware}}},
          {"solver", {{"incremental_dump", {{"interval", 5}, {"directory", saves}}}}},
          {"parameter_server", {{"save_directory", saves}, {"load_directory", saves}}}};
}

TEST(ConfigPaths, RelativeFieldsNameTheSameFilesFromTheNewDirectory) {
  const auto moved = rebase_relative_paths(config_naming("data/t.emb", "../../hardware/h.json", "shards"),
                                           "/repo/bench/configs/large", "/tmp/plans");
  EXPECT_EQ(moved["layers"][0]["source"], "../../repo/bench/configs/large/data/t.emb");
  EXPECT_EQ(moved["planner"]["hardware"], "../../repo/bench/hardware/h.json");
  EXPECT_EQ(moved["parameter_server"]["save_directory"], "../../repo/bench/configs/large/shards");
  EXPECT_EQ(moved["parameter_server"]["load_directory"], "../../repo/bench/configs/large/shards");
  EXPECT_EQ(moved["solver"]["incremental_dump"]["directory"], "../../repo/bench/configs/large/shards");
  // Every rebased path, resolved from the new directory, is the old one resolved from the old.
  const std::filesystem::path old_hardware = "/repo/bench/configs/large/../../hardware/h.json";
  EXPECT_EQ((std::filesystem::path("/tmp/plans") / moved["planner"]["hardware"].get<std::string>()).lexically_normal(),
            old_hardware.lexically_normal());
}

TEST(ConfigPaths, AbsoluteAndAbsentFieldsStayAndOneDirectoryChangesNothing) {
  const auto config = config_naming("/data/t.emb", "/hw/h.json", "/shards");
  EXPECT_EQ(rebase_relative_paths(config, "a/b", "/elsewhere"), config);
  const auto relative = config_naming("t.emb", "h.json", "s");
  EXPECT_EQ(rebase_relative_paths(relative, "x", "x/./"), relative);
  const nlohmann::json bare = {{"layers", {{{"type", "Data"}}}}};
  EXPECT_EQ(rebase_relative_paths(bare, "a", "b"), bare);
  // From a subdirectory of the working directory to the working directory ("" is ".").
  EXPECT_EQ(rebase_relative_paths(relative, "configs", "")["planner"]["hardware"], "configs/h.json");
}

}  // namespace
}  // namespace embscale::config
