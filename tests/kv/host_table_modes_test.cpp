// HostTable behaviours the random conformance run does not pin down one by one: safe-check
// modes, evaluation mode, reserved keys, incremental export, erase_if, get_score, reserve,
// clear, and option errors.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "kv/host_table.hpp"
#include "kv/initializer.hpp"

namespace embscale::kv {
namespace {

TableOptions tiny(ScoreStrategy strategy = ScoreStrategy::kStep) {
  TableOptions o;
  o.dim = 2;
  o.bucket_capacity = 16;
  o.max_capacity = 16;  // one bucket, no growth
  o.score_strategy = strategy;
  o.initializer = {.mode = InitializerMode::kDebug};
  return o;
}

std::vector<std::uint64_t> range(std::uint64_t from, std::uint64_t to) {
  std::vector<std::uint64_t> keys;
  for (auto k = from; k < to; ++k) keys.push_back(k);
  return keys;
}

// A full bucket of LFU score 2 refuses newcomers (score 1): the three safe-check modes.
CallStats refuse_four(HostTable& table, std::vector<float>& out) {
  const auto warm = range(0, 16);
  std::vector<float> rows(warm.size() * 2);
  table.find_or_insert(warm, rows);
  table.find_or_insert(warm, rows);  // every key now has score 2
  const auto cold = range(100, 104);
  out.assign(cold.size() * 2, -1.0f);
  return table.find_or_insert(cold, out);
}

TEST(HostTableModes, SafeCheckModes) {
  for (const auto mode : {SafeCheck::kIgnore, SafeCheck::kWarning}) {
    auto o = tiny(ScoreStrategy::kLfu);
    o.safe_check = mode;
    HostTable table(o);
    std::vector<float> out;
    ::testing::internal::CaptureStderr();
    const auto stats = refuse_four(table, out);
    // Counted, not printed: a run prints a WARNING table's total once (run::warn_of_refused_keys).
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
    EXPECT_EQ(stats.refused, 4);
    EXPECT_EQ(out, std::vector<float>(8, 0.0f)) << "refused keys read as zeros";
    EXPECT_EQ(table.size(), 16);
  }
  auto o = tiny(ScoreStrategy::kLfu);
  o.safe_check = SafeCheck::kError;
  HostTable table(o);
  std::vector<float> out;
  try {
    refuse_four(table, out);
    ADD_FAILURE() << "ERROR mode must fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("could not insert 4 of 4 keys"), std::string::npos) << e.what();
  }
}

TEST(HostTableModes, EvaluationModeReadsWithoutInserting) {
  auto o = tiny();
  o.optimizer_state_width = 3;
  o.training = false;
  o.eval_initializer = {.mode = InitializerMode::kConstant, .value = 0.5};
  HostTable table(o);
  EXPECT_EQ(table.row_width(), 2) << "no optimizer state in evaluation";
  const std::vector<std::uint64_t> keys{7, 8};
  std::vector<float> out(4);
  std::vector<std::uint8_t> founds(2);
  table.find_or_insert(keys, out, founds);
  EXPECT_EQ(out, (std::vector<float>{0.5f, 0.5f, 0.5f, 0.5f}));
  EXPECT_EQ(founds, (std::vector<std::uint8_t>{0, 0}));
  EXPECT_EQ(table.size(), 0);
  table.insert_or_assign(std::vector<std::uint64_t>{8}, std::vector<float>{3, 4});
  table.find_or_insert(keys, out, founds);
  EXPECT_EQ(out, (std::vector<float>{0.5f, 0.5f, 3, 4}));
}

TEST(HostTableModes, TrainingRowsCarryZeroOptimizerState) {
  auto o = tiny();
  o.optimizer_state_width = 2;
  HostTable table(o);
  std::vector<float> out(4);
  table.find_or_insert(std::vector<std::uint64_t>{5}, out);
  EXPECT_EQ(out, (std::vector<float>{5.0f, 5.001f, 0.0f, 0.0f}));  // DEBUG: key + d/1000, then zeros
}

TEST(HostTableModes, ReservedKeysAreRejected) {
  HostTable table(tiny());
  std::vector<float> out(4);
  for (const auto key : {~0ULL, ~0ULL - 1, ~0ULL - 2}) {
    try {
      table.find_or_insert(std::vector<std::uint64_t>{1, key}, out);
      ADD_FAILURE() << key;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("(position 1): the keys 2^64-3 .. 2^64-1 (int64 -3 .. -1) are reserved"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(table.size(), 0) << "a rejected batch changes nothing";
}

TEST(HostTableModes, IncrementalExportEraseIfAndScores) {
  HostTable table(tiny(ScoreStrategy::kStep));
  EXPECT_EQ(table.get_score(), 1u);
  std::vector<float> rows(2 * 4);
  table.find_or_insert(range(0, 4), rows);   // step 1
  const auto threshold = table.get_score();  // 2: what the next call will use
  table.find_or_insert(range(2, 6), rows);   // step 2: keys 2..5 get score 2
  std::vector<std::uint64_t> keys, scores;
  std::vector<float> values;
  EXPECT_EQ(table.export_batch_if(threshold, keys, values, scores), 4);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, range(2, 6));
  EXPECT_EQ(table.erase_if([](std::uint64_t key, std::uint64_t) { return key % 2 == 0; }), 3);
  EXPECT_EQ(table.size(), 3);
  std::vector<std::uint8_t> founds(6);
  table.contains(range(0, 6), founds);
  EXPECT_EQ(founds, (std::vector<std::uint8_t>{0, 1, 0, 1, 0, 1}));
}

TEST(HostTableModes, ReserveGrowsAndClearEmpties) {
  auto o = tiny();
  o.max_capacity = 1024;
  o.init_capacity = 16;
  HostTable table(o);
  EXPECT_EQ(table.capacity(), 16);
  std::vector<float> rows(2 * 10);
  table.find_or_insert(range(0, 10), rows);
  table.reserve(500);
  EXPECT_EQ(table.capacity(), 512);
  EXPECT_EQ(table.size(), 10) << "growth keeps every entry";
  table.reserve(5000);
  EXPECT_EQ(table.capacity(), 1024) << "never beyond max_capacity";
  table.clear();
  EXPECT_EQ(table.size(), 0);
  std::vector<std::uint8_t> founds(10);
  table.contains(range(0, 10), founds);
  EXPECT_EQ(founds, std::vector<std::uint8_t>(10, 0));
}

TEST(HostTableModes, OptionErrorsNameTheField) {
  const auto error_of = [](TableOptions o) {
    try {
      HostTable table(std::move(o));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  auto o = tiny();
  o.bucket_capacity = 100;
  EXPECT_EQ(error_of(o), "table options: bucket_capacity: expected a power of two in [16, 1024], got 100");
  o = tiny();
  o.max_load_factor = 1.5;
  EXPECT_EQ(error_of(o), "table options: max_load_factor: expected a number in (0, 1], got 1.500000");
  o = tiny();
  o.dim = 0;
  EXPECT_EQ(error_of(o), "table options: dim: expected an integer >= 1, got 0");
}

TEST(Initializer, PureFunctionOfSeedAndKeyWithinItsBounds) {
  const std::int64_t n = 10000, dim = 64;
  std::vector<float> a(dim), b(dim);
  InitializerArgs uniform;  // default bounds -+1/sqrt(n)
  initial_row(uniform, 3, n, 12345, dim, a);
  initial_row(uniform, 3, n, 12345, dim, b);
  EXPECT_EQ(a, b);
  initial_row(uniform, 4, n, 12345, dim, b);
  EXPECT_NE(a, b) << "another seed, another row";
  for (const float v : a) EXPECT_LE(std::abs(v), 0.01f);
  // Truncated normal at narrow default bounds: within them, and not piled on the edges.
  InitializerArgs truncated{.mode = InitializerMode::kTruncatedNormal};
  double sum = 0, sum_sq = 0;
  std::int64_t count = 0;
  for (std::uint64_t key = 0; key < 2000; ++key) {
    initial_row(truncated, 1, n, key, dim, a);
    for (const float v : a) {
      ASSERT_LE(std::abs(v), 0.01f + 1e-7f);
      sum += v;
      sum_sq += static_cast<double>(v) * v;
      ++count;
    }
  }
  // Conditioned on [-0.01, 0.01] with std 1 the law is within 1e-4 of uniform: variance 0.01^2/3.
  EXPECT_NEAR(sum / static_cast<double>(count), 0.0, 1e-4);
  EXPECT_NEAR(sum_sq / static_cast<double>(count), 1e-4 / 3, 2e-6);
  // Normal: mean and variance over 128k draws (standard errors 0.003 and 0.004).
  InitializerArgs normal{.mode = InitializerMode::kNormal, .mean = 0.5, .std_dev = 2.0};
  sum = sum_sq = 0;
  count = 0;
  for (std::uint64_t key = 0; key < 2000; ++key) {
    initial_row(normal, 9, n, key, dim, a);
    for (const float v : a) {
      sum += v;
      sum_sq += static_cast<double>(v) * v;
      ++count;
    }
  }
  const double mean = sum / static_cast<double>(count);
  EXPECT_NEAR(mean, 0.5, 0.02);
  EXPECT_NEAR(sum_sq / static_cast<double>(count) - mean * mean, 4.0, 0.06);
}

}  // namespace
}  // namespace embscale::kv
