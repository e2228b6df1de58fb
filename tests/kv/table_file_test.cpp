// Dump and load (kv/table_file.hpp) through the KvTable interface: round trips for both key
// types, every value type, training and evaluation rows, into tables of the same, a smaller and a
// larger capacity; incremental dumps and their thresholds; atomic replacement of the file when a
// dump fails or its process is killed in the middle.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <tuple>

#include "core/error.hpp"
#include "core/half_float.hpp"
#include "kv/table_file.hpp"
#include "table_file_testing.hpp"

namespace embscale::kv {
namespace {

using testing::dump_options;
using testing::fill_random;
using testing::ScratchDir;
using testing::snapshot;
using testing::Snapshot;

// (key type, value type, training)
class RoundTrip : public ::testing::TestWithParam<std::tuple<KeyType, ValueType, bool>> {
 protected:
  template <TableKey Key> void run() {
    const auto [key_type, type, training] = GetParam();
    ScratchDir dir("table_file_round_trip");
    const auto path = dir / "table.embskv";
    HostKvTable<Key> source(dump_options(type, training, 4096));
    fill_random(source, 1500, 11);
    const Snapshot want = snapshot(source);
    ASSERT_GT(want.size(), 1000u);
    source.dump(path);
    EXPECT_EQ(dir.names(), std::vector<std::string>{"table.embskv"}) << "a temporary file was left behind";

    // Same options, and a larger table: every entry back, bit for bit, with its score.
    for (const std::int64_t capacity : {std::int64_t{4096}, std::int64_t{1} << 15}) {
      HostKvTable<Key> target(dump_options(type, training, capacity));
      const LoadStats stats = target.load(path);
      EXPECT_EQ(stats.entries, static_cast<std::int64_t>(want.size()));
      EXPECT_EQ(stats.inserted, stats.entries);
      EXPECT_EQ(stats.evicted + stats.refused + stats.replaced, 0);
      EXPECT_FALSE(stats.incremental);
      EXPECT_EQ(snapshot(target), want) << "capacity " << capacity;
    }
    // A smaller table: it fills up to its capacity, keeping per bucket the highest scores; what
    // it holds is exactly what the file held for those keys, and the counts add up.
    HostKvTable<Key> small(dump_options(type, training, 512));
    const LoadStats stats = small.load(path);
    const Snapshot got = snapshot(small);
    EXPECT_LE(small.size(), 512);
    EXPECT_GT(small.size(), 256);
    EXPECT_EQ(stats.inserted + stats.refused, stats.entries);
    EXPECT_EQ(stats.inserted - stats.evicted, small.size());
    EXPECT_GT(stats.evicted + stats.refused, 0);
    for (const auto& [key, entry] : got) {
      const auto it = want.find(key);
      ASSERT_NE(it, want.end()) << "key " << key << " was not dumped";
      EXPECT_EQ(entry, it->second) << "key " << key;
    }
  }
};

TEST_P(RoundTrip, EveryEntryComesBackIntoTablesOfAnyCapacity) {
  if (std::get<0>(GetParam()) == KeyType::kInt64) run<std::int64_t>();
  else run<std::uint64_t>();
}

INSTANTIATE_TEST_SUITE_P(KeysTypesModes, RoundTrip,
                         ::testing::Combine(::testing::Values(KeyType::kInt64, KeyType::kUint64),
                                            ::testing::Values(ValueType::kFloat32, ValueType::kFloat16,
                                                              ValueType::kBFloat16),
                                            ::testing::Bool()),
                         [](const auto& test) {
                           return to_string(std::get<0>(test.param)) + "_" + to_string(std::get<1>(test.param)) +
                                  (std::get<2>(test.param) ? "_training" : "_eval");
                         });

TEST(TableFile, AnEmptyTableRoundTrips) {
  ScratchDir dir("table_file_empty");
  HostKvTable<std::int64_t> empty(dump_options(ValueType::kFloat32, true, 256));
  empty.dump(dir / "t");
  HostKvTable<std::int64_t> target(dump_options(ValueType::kFloat32, true, 256));
  fill_random(target, 50, 3);
  const Snapshot before = snapshot(target);
  EXPECT_EQ(target.load(dir / "t").entries, 0);
  EXPECT_EQ(snapshot(target), before);
}

TEST(TableFile, LoadKeepsOtherEntriesAndReplacesPresentOnes) {
  ScratchDir dir("table_file_merge");
  HostKvTable<std::uint64_t> a(dump_options(ValueType::kFloat32, false, 4096));
  const std::vector<std::uint64_t> keys = {1, 2, 3};
  std::vector<float> rows(3 * 5, 1.0f);
  a.insert_or_assign(keys, rows, std::vector<std::uint64_t>{10, 20, 30});
  a.dump(dir / "t");
  HostKvTable<std::uint64_t> b(dump_options(ValueType::kFloat32, false, 4096));
  std::vector<float> other(2 * 5, 2.0f);
  b.insert_or_assign(std::vector<std::uint64_t>{3, 4}, other, std::vector<std::uint64_t>{99, 40});
  const LoadStats stats = b.load(dir / "t");
  EXPECT_EQ(stats.inserted, 2);
  EXPECT_EQ(stats.replaced, 1);
  const Snapshot got = snapshot(b);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got.at(3).score, 30u);  // the file's score and row
  EXPECT_EQ(got.at(3).row, std::vector<float>(5, 1.0f));
  EXPECT_EQ(got.at(4).score, 40u);
}

TEST(TableFile, RowsConvertBetweenValueTypes) {
  ScratchDir dir("table_file_convert");
  HostKvTable<std::int64_t> half(dump_options(ValueType::kFloat16, true, 4096));
  fill_random(half, 300, 5);
  half.dump(dir / "half");
  HostKvTable<std::int64_t> wide(dump_options(ValueType::kFloat32, true, 4096));
  wide.load(dir / "half");
  EXPECT_EQ(snapshot(wide), snapshot(half)) << "float16 -> float32 is exact";

  HostKvTable<std::int64_t> narrow(dump_options(ValueType::kBFloat16, true, 4096));
  wide.dump(dir / "wide");
  narrow.load(dir / "wide");
  Snapshot want = snapshot(wide);
  for (auto& [key, entry] : want)
    for (float& v : entry.row) v = to_float(to_bfloat16(v));
  EXPECT_EQ(snapshot(narrow), want) << "float32 -> bfloat16 rounds as an insert would";
}

TEST(TableFile, ManySmallChunks) {
  ScratchDir dir("table_file_chunks");
  HostKvTable<std::int64_t> source(dump_options(ValueType::kBFloat16, true, 4096));
  fill_random(source, 777, 9);
  for (const std::int64_t chunk : {1, 7, 776, 777, 778}) {
    dump(source.table(), KeyType::kInt64, dir / "t", {chunk, {}});
    HostKvTable<std::int64_t> target(dump_options(ValueType::kBFloat16, true, 4096));
    target.load(dir / "t");
    EXPECT_EQ(snapshot(target), snapshot(source)) << "chunk_entries " << chunk;
  }
}

// STEP: each score-setting call advances the step; the next threshold is the score the next call
// gives, so a chain of incremental dumps holds exactly what each interval changed.
TEST(TableFile, IncrementalDumpsChainUnderStep) {
  ScratchDir dir("table_file_incremental_step");
  const auto options = dump_options(ValueType::kFloat32, true, 4096, ScoreStrategy::kStep);
  HostKvTable<std::int64_t> table(options);
  std::vector<std::int64_t> first(100), second(100);
  for (int i = 0; i < 100; ++i) first[static_cast<std::size_t>(i)] = i, second[static_cast<std::size_t>(i)] = 1000 + i;
  std::vector<float> rows(100 * 8, 0.5f);
  table.insert_or_assign(first, rows);   // score 1
  table.insert_or_assign(second, rows);  // score 2

  const std::uint64_t t1 = table.dump_incremental(dir / "inc0", 0);
  EXPECT_EQ(t1, 3u) << "the score of the next call";
  HostKvTable<std::int64_t> replica(options);
  LoadStats stats = replica.load(dir / "inc0");
  EXPECT_EQ(stats.entries, 200);
  EXPECT_TRUE(stats.incremental);
  EXPECT_EQ(stats.threshold, 0u);
  EXPECT_EQ(stats.next_threshold, t1);

  // Nothing changed: the next incremental dump is empty, and the threshold stays.
  EXPECT_EQ(table.dump_incremental(dir / "inc1", t1), t1);
  EXPECT_EQ(replica.load(dir / "inc1").entries, 0);

  // Touch 5 old keys and add 3 new ones: exactly those are in the next dump.
  std::vector<float> changed(5 * 8, 9.0f);
  table.assign_scores(std::vector<std::int64_t>{3, 4, 5, 1003, 1004}, {});  // score 3
  table.assign(std::vector<std::int64_t>{3, 4, 5, 1003, 1004}, changed);    // values only
  table.insert_or_assign(std::vector<std::int64_t>{-1 - 3, 5000, 5001}, std::vector<float>(3 * 8, 4.0f));  // score 4
  const std::uint64_t t2 = table.dump_incremental(dir / "inc2", t1);
  EXPECT_EQ(t2, 5u);
  stats = replica.load(dir / "inc2");
  EXPECT_EQ(stats.entries, 8);
  EXPECT_EQ(stats.replaced, 5);
  EXPECT_EQ(stats.inserted, 3);
  EXPECT_EQ(snapshot(replica), snapshot(table)) << "full dump + incremental dumps = the table";
}

// CUSTOMIZED: entries with score >= threshold; the next threshold is the largest dumped score + 1.
TEST(TableFile, IncrementalDumpUnderCustomizedScores) {
  ScratchDir dir("table_file_incremental_custom");
  HostKvTable<std::uint64_t> table(dump_options(ValueType::kFloat16, false, 4096));
  std::vector<std::uint64_t> keys(50), scores(50);
  for (std::uint64_t i = 0; i < 50; ++i) keys[i] = 7 * i + 1, scores[i] = 100 + 2 * i;  // 100 .. 198
  table.insert_or_assign(keys, std::vector<float>(50 * 5, 1.5f), scores);
  EXPECT_EQ(table.dump_incremental(dir / "t", 150), 199u);
  HostKvTable<std::uint64_t> replica(dump_options(ValueType::kFloat16, false, 4096));
  EXPECT_EQ(replica.load(dir / "t").entries, 25);  // 150, 152, ..., 198
  for (const auto& [key, entry] : snapshot(replica)) EXPECT_GE(entry.score, 150u);
  EXPECT_EQ(table.dump_incremental(dir / "t", 199), 199u) << "nothing dumped: the threshold stays";
  EXPECT_EQ(replica.load(dir / "t").entries, 0);
}

// An image taken into memory is the file dump_incremental writes, byte for byte, with the same
// next threshold, and write_dump_image puts it at a path that loads like the dump (the background
// dumps of an online-training run: lib/run/online_dumps.hpp). The file's bytes are compared whole,
// so the header's threshold, counts and checksums are the same too.
TEST(TableFile, AnIncrementalImageIsTheIncrementalFile) {
  ScratchDir dir("table_file_incremental_image");
  for (const auto value_type : {ValueType::kFloat32, ValueType::kFloat16}) {
    HostKvTable<std::int64_t> table(dump_options(value_type, true, 4096, ScoreStrategy::kStep));
    fill_random(table, 900, 23);
    for (const std::uint64_t threshold : {std::uint64_t{0}, std::uint64_t{2}, std::uint64_t{1} << 40}) {
      SCOPED_TRACE("threshold " + std::to_string(threshold));
      const auto file = dir / "file", image_file = dir / "image";
      const std::uint64_t next = table.dump_incremental(file, threshold);
      const DumpImage image = table.dump_incremental_image(threshold);
      EXPECT_EQ(image.next_threshold, next);
      write_dump_image(image, image_file);
      EXPECT_EQ(testing::read_bytes(image_file), testing::read_bytes(file));
      EXPECT_EQ(image.bytes, testing::read_bytes(file));
      HostKvTable<std::int64_t> replica(dump_options(value_type, true, 4096, ScoreStrategy::kStep));
      EXPECT_EQ(replica.load(image_file).entries, image.entries);
      EXPECT_EQ(static_cast<std::int64_t>(replica.size()), image.entries);
      if (threshold == 0) {
        EXPECT_EQ(snapshot(replica), snapshot(table));
      }
    }
  }
}

TEST(TableFile, EpochStrategiesRestartAtTheEpoch) {
  ScratchDir dir("table_file_incremental_epoch");
  HostKvTable<std::int64_t> table(dump_options(ValueType::kFloat32, true, 4096, ScoreStrategy::kEpochLfu));
  table.set_epoch(3);
  table.insert_or_assign(std::vector<std::int64_t>{1, 2}, std::vector<float>(16, 1.0f));
  EXPECT_EQ(table.dump_incremental(dir / "t", 0), std::uint64_t{3} << 32);
}

TEST(TableFile, DumpToAnImpossiblePathIsAnInputError) {
  ScratchDir dir("table_file_bad_path");
  HostKvTable<std::int64_t> table(dump_options(ValueType::kFloat32, true, 256));
  EXPECT_THROW(table.dump(dir / "missing" / "t"), InputError);
  EXPECT_THROW(table.dump(dir.path()), InputError);
  EXPECT_TRUE(dir.names().empty());
}

// A dump that fails half way (here: an exception after 2 chunks) leaves the previous file and no
// temporary file; the table is usable afterwards (the read lock was released).
TEST(TableFileAtomicity, AFailedDumpLeavesThePreviousFile) {
  ScratchDir dir("table_file_failed_dump");
  const auto path = dir / "t";
  HostKvTable<std::int64_t> table(dump_options(ValueType::kFloat32, true, 4096));
  fill_random(table, 500, 1);
  table.dump(path);
  const auto previous = testing::read_bytes(path);
  const Snapshot before = snapshot(table);
  fill_random(table, 500, 2);
  DumpOptions failing{50, [](std::int64_t chunks) {
                        if (chunks == 2) throw Error("injected failure after 2 chunks");
                      }};
  EXPECT_THROW(dump(table.table(), KeyType::kInt64, path, failing), Error);
  EXPECT_EQ(dir.names(), std::vector<std::string>{"t"}) << "the temporary file must be removed";
  EXPECT_EQ(testing::read_bytes(path), previous);
  HostKvTable<std::int64_t> replica(dump_options(ValueType::kFloat32, true, 4096));
  replica.load(path);
  EXPECT_EQ(snapshot(replica), before);
  table.erase(std::vector<std::int64_t>{1});  // an exclusive call: the dump's lock is gone
}

// Runs `child` in a forked process and returns its wait status. The child must end by a signal or
// _exit (it never returns into the test).
template <typename F> int in_child(F child) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    child();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

TEST(TableFileAtomicity, AProcessKilledInTheMiddleOfADumpLeavesThePreviousDump) {
  ScratchDir dir("table_file_killed_dump");
  const auto path = dir / "t";
  HostKvTable<std::int64_t> table(dump_options(ValueType::kFloat16, true, 4096));
  fill_random(table, 800, 1);
  table.dump(path);
  const Snapshot before = snapshot(table);
  fill_random(table, 800, 2);
  const int status = in_child([&] {
    DumpOptions killed{64, [](std::int64_t chunks) {
                         if (chunks == 3) ::raise(SIGKILL);  // part of the file written
                       }};
    dump(table.table(), KeyType::kInt64, path, killed);
  });
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
  // Its temporary file stays (nobody was left to remove it), beside the intact previous dump.
  EXPECT_EQ(dir.names().size(), 2u);
  HostKvTable<std::int64_t> replica(dump_options(ValueType::kFloat16, true, 4096));
  replica.load(path);
  EXPECT_EQ(snapshot(replica), before);
}

// A kill at an arbitrary moment of a loop of large dumps: the file at the path is always one
// whole dump, the previous one or a new one.
TEST(TableFileAtomicity, AKillAtAnyMomentLeavesAWholeDump) {
  ScratchDir dir("table_file_kill_timing");
  const auto path = dir / "t";
  auto options = dump_options(ValueType::kFloat32, true, 1 << 17);
  options.dim = 32;
  HostKvTable<std::uint64_t> old_table(options), new_table(options);
  fill_random(old_table, 40000, 1);
  fill_random(new_table, 40000, 2);
  old_table.dump(path);
  const Snapshot old_entries = snapshot(old_table), new_entries = snapshot(new_table);
  for (const int delay_ms : {5, 40, 150}) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      for (;;) new_table.dump(path);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    HostKvTable<std::uint64_t> replica(options);
    replica.load(path);
    const Snapshot got = snapshot(replica);
    EXPECT_TRUE(got == old_entries || got == new_entries) << "killed after " << delay_ms << " ms";
  }
}

}  // namespace
}  // namespace embscale::kv
