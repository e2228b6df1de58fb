// global_auc (lib/model/auc.hpp) on 1, 2 and 4 ranks: each rank holds its share of one random
// evaluation set (uneven shares, a rank with none on 4 ranks), and every rank's result equals the
// single-process AUC of the whole set.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "comm/mpi_communicator.hpp"
#include "core/batch_source.hpp"
#include "model/auc.hpp"

namespace embscale::model {
namespace {

TEST(AucMpi, EveryRankGetsTheAucOfAllRanksSamples) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  for (const std::int64_t n : {std::int64_t{3}, std::int64_t{1001}}) {
    std::mt19937_64 random(7 + static_cast<std::uint64_t>(n));
    std::vector<float> scores(static_cast<std::size_t>(n)), labels(scores.size());
    for (std::size_t i = 0; i < scores.size(); ++i) {
      scores[i] = static_cast<float>(random() % 50) / 50.0f;
      labels[i] = random() % 100 < 30 + static_cast<std::uint64_t>(scores[i] * 40) ? 1.0f : 0.0f;
    }
    const Auc whole = auc(scores, labels);
    const auto share = sample_share_of(n, world.rank(), world.size());
    const auto first = static_cast<std::ptrdiff_t>(share.first), count = static_cast<std::ptrdiff_t>(share.count);
    const Auc got = global_auc(world, std::vector<float>(scores.begin() + first, scores.begin() + first + count),
                               std::vector<float>(labels.begin() + first, labels.begin() + first + count));
    EXPECT_EQ(got.positives, whole.positives) << n << " samples";
    EXPECT_EQ(got.negatives, whole.negatives) << n << " samples";
    if (std::isnan(whole.value)) EXPECT_TRUE(std::isnan(got.value));
    else EXPECT_DOUBLE_EQ(got.value, whole.value) << n << " samples";
  }
}

}  // namespace
}  // namespace embscale::model
