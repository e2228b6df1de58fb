#include "embedding/static_table.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"

namespace embscale::embedding {
namespace {

TEST(UniformInitializer, IsAPureFunctionOfSeedAndKeyWithinBounds) {
  const auto init = UniformInitializer::for_vocabulary(5, 10000);
  EXPECT_FLOAT_EQ(init.bound, 0.01f);
  std::vector<float> a(7), b(7), c(7);
  init(42, a);
  init(42, b);
  init(43, c);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (float v : a) {
    EXPECT_GE(v, -0.01f);
    EXPECT_LT(v, 0.01f);
  }
}

TEST(ShardedStaticTable, OwnsKeysModuloRanksWithReferenceInitialRows) {
  const auto init = UniformInitializer::for_vocabulary(9, 103);
  for (int ranks : {1, 2, 4}) {
    std::int64_t total_rows = 0;
    for (int r = 0; r < ranks; ++r) {
      const ShardedStaticTable table(r, ranks, 103, 5, 103, init);
      total_rows += table.local_rows();
      std::vector<float> expected(5);
      for (Key k = r; k < 103; k += ranks) {
        ASSERT_TRUE(table.owns(k));
        init(k, expected);
        EXPECT_EQ(std::vector<float>(table.row(k).begin(), table.row(k).end()), expected);
      }
      EXPECT_FALSE(table.owns(103));
      if (ranks > 1) {
        EXPECT_FALSE(table.owns((r + 1) % ranks));
      }
    }
    EXPECT_EQ(total_rows, 103);
  }
}

TEST(ShardedStaticTable, GatherAndSgdActOnTheRightRows) {
  ShardedStaticTable table(1, 2, 20, 3, 10, UniformInitializer::for_vocabulary(1, 20));
  const std::vector<Key> keys{5, 1, 5};
  std::vector<float> rows(9);
  table.gather(keys, rows);
  const std::vector<float> before(table.row(5).begin(), table.row(5).end());
  EXPECT_EQ(std::vector<float>(rows.begin(), rows.begin() + 3), before);
  const std::vector<float> grads{1, 2, 3, 0, 0, 0, 1, 1, 1};
  table.apply_sgd(keys, grads, 0.5f);
  EXPECT_FLOAT_EQ(table.row(5)[0], before[0] - 0.5f * 2);
  EXPECT_FLOAT_EQ(table.row(5)[2], before[2] - 0.5f * 4);
  EXPECT_THROW(table.gather(std::vector<Key>{4}, std::span<float>(rows).first(3)), Error);
}

TEST(ShardedStaticTable, RejectsAVocabularyBeyondThePerRankCapacity) {
  try {
    ShardedStaticTable table(0, 2, 101, 4, 50, UniformInitializer::for_vocabulary(1, 101));
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("max_vocabulary_size_per_gpu: expected at least 51"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace embscale::embedding
