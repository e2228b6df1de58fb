// Server-side save and load (lib/ps/shard_files.hpp): a table split over S servers and saved
// loads into S' servers, every entry (row and score, exactly) on the server that owns it now; and
// the directory's refusals name what is wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "kv/table_file_testing.hpp"
#include "ps/ps_messages.hpp"
#include "ps/shard_files.hpp"

namespace embscale::ps {
namespace {

using kv::testing::ScratchDir;
using kv::testing::Snapshot;

// Room for every entry from the start (32 buckets of 128 for about 600 keys): no bucket overflows,
// so every entry saved must come back (a bucket's overflow is the KV table's rule, tested there).
kv::TableOptions shard_options() {
  kv::TableOptions o = kv::testing::dump_options(kv::ValueType::kFloat32, true, 4096);
  o.bucket_capacity = 128;
  o.init_capacity = 4096;
  return o;
}

// `model`'s entries, each restored (exact score) into the table of the server that owns it.
std::vector<std::unique_ptr<kv::HostKvTable<std::int64_t>>> split(const Snapshot& model, int servers) {
  std::vector<std::unique_ptr<kv::HostKvTable<std::int64_t>>> shards;
  for (int s = 0; s < servers; ++s) shards.push_back(std::make_unique<kv::HostKvTable<std::int64_t>>(shard_options()));
  for (const auto& [stored, entry] : model) {
    const auto key = static_cast<std::int64_t>(stored);
    const std::vector<std::int64_t> keys = {key};
    const std::vector<std::uint64_t> scores = {entry.score};
    shards[static_cast<std::size_t>(server_of(key, servers))]->restore(keys, entry.row, scores);
  }
  return shards;
}

TEST(ShardFiles, ATableSavedBySServersLoadsIntoAnyNumberOfServersUnchanged) {
  kv::HostKvTable<std::int64_t> whole(shard_options());
  kv::testing::fill_random(whole, 600, 20261127);
  const Snapshot model = kv::testing::snapshot(whole);
  for (const int saved : {1, 2, 3}) {
    ScratchDir dir("ps_shards_" + std::to_string(saved));
    const auto shards = split(model, saved);
    Snapshot held;  // what the S servers hold and save
    for (int s = 0; s < saved; ++s) {
      save_shard(*shards[static_cast<std::size_t>(s)], dir.path(), s, saved);
      held.merge(kv::testing::snapshot(*shards[static_cast<std::size_t>(s)]));
    }
    ASSERT_EQ(held, model);
    for (const int servers : {1, 2, 3, 4}) {
      const std::string where = "saved by " + std::to_string(saved) + ", loaded by " + std::to_string(servers);
      Snapshot merged;
      std::int64_t kept = 0;
      for (int s = 0; s < servers; ++s) {
        kv::HostKvTable<std::int64_t> shard(shard_options());
        const ShardLoad load = load_shard(shard, dir.path(), s, servers);
        EXPECT_EQ(load.saved_servers, saved) << where;
        EXPECT_EQ(load.files_read, saved == servers ? 1 : saved) << where;
        EXPECT_EQ(load.evicted + load.refused, 0) << where;
        kept += load.entries_kept;
        for (const auto& [stored, entry] : kv::testing::snapshot(shard)) {
          EXPECT_EQ(server_of(static_cast<std::int64_t>(stored), servers), s) << where << ": key " << stored;
          EXPECT_TRUE(merged.emplace(stored, entry).second) << where << ": key " << stored << " on two servers";
        }
      }
      EXPECT_EQ(kept, static_cast<std::int64_t>(held.size())) << where;
      EXPECT_TRUE(merged == held) << where << ": the servers' entries differ from the saved ones";
    }
  }
}

// load_shard refuses `dir` with an InputError saying each of `says`.
void expect_refused(const std::filesystem::path& dir, const std::vector<std::string>& says, int servers = 2) {
  kv::HostKvTable<std::int64_t> shard(shard_options());
  try {
    load_shard(shard, dir, 0, servers);
    ADD_FAILURE() << "expected an InputError saying " << says.front();
  } catch (const InputError& e) {
    const std::string what = e.what();
    for (const auto& phrase : says) EXPECT_NE(what.find(phrase), std::string::npos) << what;
  }
  EXPECT_EQ(shard.size(), 0) << "a refused load changed the table";
}

// A shard loaded under STEP scores on past the saving run's steps: a key inserted after the load
// scores above every loaded key, so it is not the first evicted (a new table's counter starts at 0).
TEST(ShardFiles, ALoadedShardScoresOnPastTheSavedSteps) {
  ScratchDir dir("ps_shards_step");
  kv::TableOptions o = shard_options();
  o.score_strategy = kv::ScoreStrategy::kStep;
  kv::HostKvTable<std::int64_t> saved(o);
  kv::testing::fill_random(saved, 300, 7);
  save_shard(saved, dir.path(), 0, 1);
  std::uint64_t newest = 0;
  for (const auto& [key, entry] : kv::testing::snapshot(saved)) newest = std::max(newest, entry.score);
  kv::HostKvTable<std::int64_t> loaded(o);
  (void)load_shard(loaded, dir.path(), 0, 1);
  EXPECT_EQ(loaded.get_score(), newest + 1);
  const std::vector<std::int64_t> fresh = {999999};
  loaded.insert_or_assign(fresh, std::vector<float>(static_cast<std::size_t>(loaded.row_width()), 1.0f));
  kv::Entries<std::int64_t> entries;
  loaded.export_batch(0, loaded.capacity(), entries);
  bool found = false;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries.keys[i] != fresh.front()) continue;
    found = true;
    EXPECT_GT(entries.scores[i], newest);
  }
  EXPECT_TRUE(found) << "the new key was not inserted";
}

TEST(ShardFiles, RefusalsNameTheDirectoryAndTheFiles) {
  kv::HostKvTable<std::int64_t> whole(shard_options());
  kv::testing::fill_random(whole, 50, 7);
  ScratchDir dir("ps_shards_refused");
  expect_refused(dir.path(), {dir.path().string(), "no saved parameter-server shards"});

  const auto three = split(kv::testing::snapshot(whole), 3);
  for (const int s : {0, 2}) save_shard(*three[static_cast<std::size_t>(s)], dir.path(), s, 3);
  expect_refused(dir.path(), {"shard-1-of-3.kv is missing", "3 servers"});
  save_shard(*three[1], dir.path(), 1, 3);

  const auto two = split(kv::testing::snapshot(whole), 2);
  save_shard(*two[0], dir.path(), 0, 2);
  expect_refused(dir.path(), {"saved by 2 and 3 servers"});
  std::filesystem::remove(shard_path(dir.path(), 0, 2));

  kv::TableOptions narrower = shard_options();
  narrower.dim = 4;  // another dim: kv's compatibility rule, naming the file and the field
  kv::HostKvTable<std::int64_t> other(narrower);
  try {
    load_shard(other, dir.path(), 0, 2);
    ADD_FAILURE() << "a dump of dim 5 loaded into a table of dim 4";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("shard-0-of-3.kv"), std::string::npos) << what;
    EXPECT_NE(what.find("dim"), std::string::npos) << what;
  }
  EXPECT_EQ(other.size(), 0);
}

}  // namespace
}  // namespace embscale::ps
