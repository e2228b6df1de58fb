// RocksDbStorage against a std::map on randomized batches with fixed seeds (repeated keys in a
// batch, erase of absent keys, keys across the whole uint64 range), in real directories under
// the system's temporary directory: exact size(), for_each (each entry once, in key order, in
// bounded batches), persistence across close and reopen, the refusals (another row width, a
// database or directory not made by embscale, a path under a regular file, a second open), and
// crash consistency (a child process writes and exits without closing).
#include "kv/rocksdb_storage.hpp"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace embscale::kv {
namespace {

namespace fs = std::filesystem;

// The crash test re-executes this binary for its child (gtest's "threadsafe" death test style,
// so the child starts without the parent's RocksDB threads); the child finds the parent's
// directory here.
constexpr const char* kChildDirectoryVariable = "EMBSCALE_ROCKSDB_TEST_DIRECTORY";

struct Entry {
  std::uint64_t score = 0;
  std::vector<float> row;
  bool operator==(const Entry&) const = default;
};
using Reference = std::map<std::uint64_t, Entry>;

enum class Kind { kInsert, kErase, kFind };
struct Batch {
  Kind kind = Kind::kInsert;
  std::vector<std::uint64_t> keys;
  std::vector<float> values;  // kInsert: keys.size() rows
  std::vector<std::uint64_t> scores;
};

// Keys mostly from a small range (repeats within and across batches), some from the top of the
// uint64 range (every byte of the big-endian encoding matters for the order).
std::uint64_t random_key(std::mt19937_64& rng) {
  const auto pick = rng() % 8;
  if (pick == 0) return ~std::uint64_t{0} - rng() % 16;
  if (pick == 1) return (std::uint64_t{1} << 32) + rng() % 16;
  return rng() % 200;
}

std::vector<Batch> random_batches(std::uint64_t seed, int count, std::int64_t width, bool with_finds) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value_of(-3.0f, 3.0f);
  std::vector<Batch> batches(static_cast<std::size_t>(count));
  for (auto& b : batches) {
    const auto r = rng() % 10;
    b.kind = r < 5 ? Kind::kInsert : r < 7 || !with_finds ? Kind::kErase : Kind::kFind;
    const auto n = static_cast<std::size_t>(rng() % 70);  // 0 .. 69 keys: empty batches too
    for (std::size_t i = 0; i < n; ++i) b.keys.push_back(random_key(rng));
    if (b.kind == Kind::kInsert) {
      for (std::size_t i = 0; i < n * static_cast<std::size_t>(width); ++i) b.values.push_back(value_of(rng));
      for (std::size_t i = 0; i < n; ++i) b.scores.push_back(rng());
    }
  }
  return batches;
}

// Applies an insert or erase to the reference, one key at a time in input order; returns how
// many keys erase removed.
std::int64_t apply(Reference& reference, const Batch& b, std::int64_t width) {
  const auto w = static_cast<std::size_t>(width);
  std::int64_t erased = 0;
  for (std::size_t i = 0; i < b.keys.size(); ++i) {
    if (b.kind == Kind::kInsert)
      reference[b.keys[i]] = {
          b.scores[i],
          {b.values.begin() + static_cast<long>(i * w), b.values.begin() + static_cast<long>((i + 1) * w)}};
    else if (b.kind == Kind::kErase) erased += static_cast<std::int64_t>(reference.erase(b.keys[i]));
  }
  return erased;
}

void apply(RocksDbStorage& storage, const Batch& b) {
  if (b.kind == Kind::kInsert) storage.insert(b.keys, b.values, b.scores);
  if (b.kind == Kind::kErase) storage.erase(b.keys);
}

// find on b.keys must give the reference's answer; rows of absent keys stay untouched.
void expect_find_matches(const RocksDbStorage& storage, const Reference& reference, std::span<const std::uint64_t> keys,
                         bool want_scores) {
  const auto w = static_cast<std::size_t>(storage.row_width());
  constexpr float kUntouched = -12345.0f;
  std::vector<float> values(keys.size() * w, kUntouched);
  std::vector<std::uint8_t> founds(keys.size(), 7);
  std::vector<std::uint64_t> scores(want_scores ? keys.size() : 0, 99);
  storage.find(keys, values, founds, scores);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::vector<float> row(values.begin() + static_cast<long>(i * w),
                                 values.begin() + static_cast<long>((i + 1) * w));
    const auto it = reference.find(keys[i]);
    if (it == reference.end()) {
      EXPECT_EQ(founds[i], 0) << "key " << keys[i];
      EXPECT_EQ(row, std::vector<float>(w, kUntouched)) << "key " << keys[i];
    } else {
      EXPECT_EQ(founds[i], 1) << "key " << keys[i];
      EXPECT_EQ(row, it->second.row) << "key " << keys[i];
      if (want_scores) {
        EXPECT_EQ(scores[i], it->second.score) << "key " << keys[i];
      }
    }
  }
}

// for_each visits every entry of the reference exactly once, in key order, in non-empty
// batches of at most batch_entries.
void expect_same_contents(const RocksDbStorage& storage, const Reference& reference, std::int64_t batch_entries) {
  ASSERT_EQ(storage.size(), static_cast<std::int64_t>(reference.size()));
  const auto w = static_cast<std::size_t>(storage.row_width());
  std::vector<std::pair<std::uint64_t, Entry>> seen;
  storage.for_each([&](std::span<const std::uint64_t> keys, std::span<const float> values,
                       std::span<const std::uint64_t> scores) {
    EXPECT_FALSE(keys.empty());
    EXPECT_LE(static_cast<std::int64_t>(keys.size()), batch_entries);
    ASSERT_EQ(values.size(), keys.size() * w);
    ASSERT_EQ(scores.size(), keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i)
      seen.push_back(
          {keys[i],
           {scores[i], {values.begin() + static_cast<long>(i * w), values.begin() + static_cast<long>((i + 1) * w)}}});
  });
  ASSERT_EQ(seen.size(), reference.size());
  auto want = reference.begin();
  for (const auto& [key, entry] : seen) {  // same order: each key once, ascending
    EXPECT_EQ(key, want->first);
    EXPECT_EQ(entry, want->second) << "key " << key;
    ++want;
  }
}

class RocksDbStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* inherited = std::getenv(kChildDirectoryVariable)) {
      dir = inherited;  // the crash test's child: the parent made and will remove it
      return;
    }
    dir = fs::temp_directory_path() / ("embscale_rocksdb_test_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  // Runs `construct` and returns the message of the InputError it throws ("" when none).
  template <class F> static std::string input_error_of(F construct) {
    try {
      construct();
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir;
};

TEST_F(RocksDbStorageTest, RandomBatchesMatchAMapReference) {
  constexpr std::int64_t kWidth = 5;
  RocksDbOptions options;
  options.batch_entries = 16;  // batches of up to 69 keys span several chunks
  RocksDbStorage storage(dir / "db", kWidth, options);
  EXPECT_EQ(storage.describe(), "rocksdb:" + (dir / "db").string());
  EXPECT_EQ(storage.row_width(), kWidth);
  EXPECT_EQ(storage.size(), 0);
  Reference reference;
  std::int64_t erased_total = 0, found_checks = 0;
  const auto batches = random_batches(20261201, 400, kWidth, /*with_finds=*/true);
  for (std::size_t n = 0; n < batches.size(); ++n) {
    const auto& b = batches[n];
    if (b.kind == Kind::kInsert) {
      EXPECT_EQ(storage.insert(b.keys, b.values, b.scores), 0);
    }
    if (b.kind == Kind::kErase) {
      const auto want = apply(reference, b, kWidth);
      ASSERT_EQ(storage.erase(b.keys), want) << "batch " << n;
      erased_total += want;
    } else {
      apply(reference, b, kWidth);
    }
    ASSERT_EQ(storage.size(), static_cast<std::int64_t>(reference.size())) << "batch " << n;
    if (b.kind == Kind::kFind) {
      expect_find_matches(storage, reference, b.keys, /*want_scores=*/n % 2 == 0);
      ++found_checks;
    }
    if (n % 50 == 49) expect_same_contents(storage, reference, options.batch_entries);
  }
  expect_same_contents(storage, reference, options.batch_entries);
  // The sequence exercised what it is meant to: erasures, lookups, a table of several chunks.
  EXPECT_GT(erased_total, 100);
  EXPECT_GT(found_checks, 50);
  EXPECT_GT(reference.size(), 3u * static_cast<std::size_t>(options.batch_entries));
}

TEST_F(RocksDbStorageTest, ReopenKeepsEntriesScoresAndSize) {
  constexpr std::int64_t kWidth = 3;
  const auto path = dir / "db";
  Reference reference;
  const auto batches = random_batches(77, 90, kWidth, /*with_finds=*/false);
  for (std::size_t part = 0; part < 3; ++part) {  // 30 batches per open
    RocksDbStorage storage(path, kWidth);
    ASSERT_EQ(storage.size(), static_cast<std::int64_t>(reference.size())) << "open " << part;
    expect_same_contents(storage, reference, RocksDbOptions().batch_entries);
    for (std::size_t n = part * 30; n < (part + 1) * 30; ++n) {
      apply(storage, batches[n]);
      apply(reference, batches[n], kWidth);
    }
  }
  RocksDbStorage storage(path, kWidth);
  expect_same_contents(storage, reference, RocksDbOptions().batch_entries);
  std::vector<std::uint64_t> all_keys;
  for (std::uint64_t k = 0; k < 200; ++k) all_keys.push_back(k);
  expect_find_matches(storage, reference, all_keys, /*want_scores=*/true);
  EXPECT_GT(reference.size(), 20u);
}

TEST_F(RocksDbStorageTest, CreatesInAnEmptyDirectoryWithNoTemporaryLeftBehind) {
  const auto path = dir / "empty";
  fs::create_directory(path);
  {
    RocksDbStorage storage(path / "", 2);  // a trailing separator names the same directory
    EXPECT_EQ(storage.describe(), "rocksdb:" + path.string());
    const std::vector<std::uint64_t> keys = {5};
    const std::vector<float> row = {1.5f, -2.5f};
    const std::vector<std::uint64_t> scores = {9};
    storage.insert(keys, row, scores);
  }
  EXPECT_TRUE(fs::exists(path / "CURRENT"));
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename(), "empty") << "left behind: " << e.path();
  EXPECT_EQ(RocksDbStorage(path, 2).size(), 1);
}

TEST_F(RocksDbStorageTest, RefusesAnotherRowWidth) {
  const auto path = dir / "db";
  RocksDbStorage(path, 4);
  const auto message = input_error_of([&] { RocksDbStorage(path, 8); });
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("row width 4"), std::string::npos) << message;
  EXPECT_NE(message.find("row width 8"), std::string::npos) << message;
  EXPECT_EQ(RocksDbStorage(path, 4).size(), 0);  // the refusal changed nothing
}

TEST_F(RocksDbStorageTest, RefusesADatabaseNotMadeByEmbscale) {
  const auto path = dir / "plain";
  {  // a RocksDB database of someone else's: only the default column family
    rocksdb::Options options;
    options.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, path.string(), &db).ok());
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "a key", "a value").ok());
    ASSERT_TRUE(db->Close().ok());
    delete db;
  }
  const auto message = input_error_of([&] { RocksDbStorage(path, 4); });
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("not made by embscale"), std::string::npos) << message;
}

TEST_F(RocksDbStorageTest, RefusesANonEmptyDirectoryThatIsNoDatabase) {
  const auto path = dir / "home";
  fs::create_directory(path);
  std::ofstream(path / "notes.txt") << "not a database\n";
  const auto message = input_error_of([&] { RocksDbStorage(path, 4); });
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("not empty"), std::string::npos) << message;
  EXPECT_EQ(std::distance(fs::directory_iterator(path), fs::directory_iterator()), 1);  // left as it was
}

TEST_F(RocksDbStorageTest, RefusesAPathUnderARegularFile) {
  std::ofstream(dir / "file") << "x";
  const auto path = dir / "file" / "db";
  const auto message = input_error_of([&] { RocksDbStorage(path, 4); });
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(input_error_of([&] { RocksDbStorage(dir / "file", 4); }).find("not a directory"), std::string::npos);
}

TEST_F(RocksDbStorageTest, RefusesBadOptions) {
  RocksDbOptions options;
  options.batch_entries = 0;
  EXPECT_NE(input_error_of([&] { RocksDbStorage(dir / "db", 4, options); }).find("batch_entries"), std::string::npos);
  EXPECT_NE(input_error_of([&] { RocksDbStorage(dir / "db", 0); }).find("row_width"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "db"));
}

TEST_F(RocksDbStorageTest, ASecondOpenOfTheSameDatabaseFailsNamingThePath) {
  RocksDbStorage first(dir / "db", 4);
  try {
    RocksDbStorage second(dir / "db", 4);
    FAIL() << "no throw";
  } catch (const InputError& e) {
    FAIL() << "a lock held by another handle is not bad input: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "db").string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("lock"), std::string::npos) << e.what();
  }
}

TEST_F(RocksDbStorageTest, MismatchedSpansAreRefused) {
  RocksDbStorage storage(dir / "db", 2);
  const std::vector<std::uint64_t> keys = {1, 2};
  const std::vector<float> one_row = {1.0f, 2.0f};
  const std::vector<std::uint64_t> scores = {1, 2};
  EXPECT_THROW(storage.insert(keys, one_row, scores), Error);
  std::vector<float> out(4);
  std::vector<std::uint8_t> founds(1);
  EXPECT_THROW(storage.find(keys, out, founds, {}), Error);
  EXPECT_EQ(storage.size(), 0);
}

// A child process opens the storage, writes `batches`, and exits without closing it (no flush,
// no destructor): the reopened storage must hold exactly the entries the child wrote, and its
// persisted count must equal them (the count is in each change's WriteBatch). The last batch
// decides which path's count record is checked, so there is one test per kind.
void expect_count_survives_exit_without_close(const fs::path& dir, const std::vector<Batch>& batches) {
  constexpr std::int64_t kWidth = 4;
  const auto path = dir / "db";
  RocksDbOptions options;
  options.batch_entries = 8;
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ::setenv(kChildDirectoryVariable, dir.c_str(), 1);
  EXPECT_EXIT(
      {
        RocksDbStorage storage(path, kWidth, options);
        for (const auto& b : batches) apply(storage, b);
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
  ::unsetenv(kChildDirectoryVariable);

  Reference reference;
  for (const auto& b : batches) apply(reference, b, kWidth);
  ASSERT_GT(reference.size(), 20u);
  RocksDbStorage storage(path, kWidth, options);
  expect_same_contents(storage, reference, options.batch_entries);
}

std::vector<Batch> random_batches_then(Kind last) {
  auto batches = random_batches(4242, 60, 4, /*with_finds=*/false);
  Batch b;
  b.kind = last;
  for (std::uint64_t k = 0; k < 40; ++k)
    b.keys.push_back(last == Kind::kInsert ? 1000 + k : k);  // new / mostly present
  if (last == Kind::kInsert) {
    b.values.assign(b.keys.size() * 4, 0.25f);
    b.scores.assign(b.keys.size(), 3);
  }
  batches.push_back(b);
  return batches;
}

TEST_F(RocksDbStorageTest, CountSurvivesAnExitWithoutCloseAfterInsert) {
  expect_count_survives_exit_without_close(dir, random_batches_then(Kind::kInsert));
}

TEST_F(RocksDbStorageTest, CountSurvivesAnExitWithoutCloseAfterErase) {
  expect_count_survives_exit_without_close(dir, random_batches_then(Kind::kErase));
}

}  // namespace
}  // namespace embscale::kv
