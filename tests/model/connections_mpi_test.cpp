// The hybrid-parallel connections (lib/model/connections.hpp, SINGA's hybrid parallelism) and the bridge against a
// single-process reference on 1, 2 and 4 ranks: a blob every rank can compute whole, each rank
// handed its part; forward must give each rank exactly its dst input cut from the whole blob, and
// backward exactly its part of the gradient (Split: of the sum of every rank's gradient copy).
// Values are small integers: every sum is exact whatever the reduction's order.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/mpi_communicator.hpp"
#include "core/batch_source.hpp"
#include "core/error.hpp"
#include "model/bridge.hpp"
#include "model/connections.hpp"

namespace embscale::model {
namespace {

// Element (i, j) of the whole blob, and of rank r's gradient copy.
float value(std::int64_t i, std::int64_t j) { return static_cast<float>(i * 100 + j); }
float grad(std::int64_t i, std::int64_t j, int r) { return static_cast<float>((i * 7 + j * 3 + r * 11) % 23); }

// Rank `rank`'s part of the rows x cols blob whose element (i, j) is at(i, j).
template <class At> std::vector<float> cut(BlobShape shape, PartitionDim dim, int rank, int ranks, const At& at) {
  const SampleShare rows =
      dim == PartitionDim::kData ? sample_share_of(shape.rows, rank, ranks) : SampleShare{0, shape.rows};
  const SampleShare cols =
      dim == PartitionDim::kFeature ? sample_share_of(shape.cols, rank, ranks) : SampleShare{0, shape.cols};
  std::vector<float> out;
  for (std::int64_t i = rows.first; i < rows.first + rows.count; ++i)
    for (std::int64_t j = cols.first; j < cols.first + cols.count; ++j) out.push_back(at(i, j));
  return out;
}
template <class At> std::vector<float> whole(BlobShape shape, const At& at) {
  std::vector<float> out;
  for (std::int64_t i = 0; i < shape.rows; ++i)
    for (std::int64_t j = 0; j < shape.cols; ++j) out.push_back(at(i, j));
  return out;
}

TEST(HybridConnections, SeedTableActions) {
  using enum PartitionDim;
  using enum Connection;
  EXPECT_EQ(connection_action(kData, kData, kOneToOne), ConnectionAction::kDirect);
  EXPECT_EQ(connection_action(kFeature, kFeature, kOneToOne), ConnectionAction::kDirect);
  EXPECT_EQ(connection_action(kData, kData, kOneToAll), ConnectionAction::kDirect);
  EXPECT_EQ(connection_action(kFeature, kData, kOneToOne), ConnectionAction::kSliceConcate);
  EXPECT_EQ(connection_action(kData, kFeature, kOneToOne), ConnectionAction::kSliceConcate);
  EXPECT_EQ(connection_action(kFeature, kData, kOneToAll), ConnectionAction::kSliceConcate);
  EXPECT_EQ(connection_action(kData, kFeature, kOneToAll), ConnectionAction::kSplitConcate);
  EXPECT_EQ(connection_action(kFeature, kFeature, kOneToAll), ConnectionAction::kSplitConcate);
}

TEST(HybridConnections, EveryRowOfTheSeedTableMovesTheRightDataBothWays) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const int me = world.rank(), P = world.size();
  // Uneven shares, and fewer columns than ranks on 4 (a rank with no columns).
  for (const BlobShape shape : {BlobShape{7, 5}, BlobShape{9, 3}, BlobShape{4, 8}})
    for (const PartitionDim src : {PartitionDim::kData, PartitionDim::kFeature})
      for (const PartitionDim dst : {PartitionDim::kData, PartitionDim::kFeature})
        for (const Connection connection : {Connection::kOneToOne, Connection::kOneToAll}) {
          const ConnectionAction action = connection_action(src, dst, connection);
          const std::string where = std::to_string(shape.rows) + "x" + std::to_string(shape.cols) + ", src " +
                                    std::to_string(static_cast<int>(src)) + ", dst " +
                                    std::to_string(static_cast<int>(dst)) +
                                    (connection == Connection::kOneToAll ? ", OneToAll" : ", OneToOne") + ", rank " +
                                    std::to_string(me) + " of " + std::to_string(P);
          const auto input = connect_forward<float>(world, shape, src, dst, connection, cut(shape, src, me, P, value));
          // Direct keeps src's partitioning (equal to dst's); Split gives the whole blob.
          const auto want =
              action == ConnectionAction::kSplitConcate ? whole(shape, value) : cut(shape, dst, me, P, value);
          EXPECT_EQ(input, want) << where << ": forward";

          std::vector<float> dst_grad, want_grad;
          if (action == ConnectionAction::kSplitConcate) {
            dst_grad = whole(shape, [&](std::int64_t i, std::int64_t j) { return grad(i, j, me); });
            want_grad = cut(shape, src, me, P, [&](std::int64_t i, std::int64_t j) {
              float sum = 0;
              for (int r = 0; r < P; ++r) sum += grad(i, j, r);
              return sum;
            });
          } else {
            const auto g = [](std::int64_t i, std::int64_t j) { return grad(i, j, 0); };
            dst_grad = cut(shape, dst, me, P, g);
            want_grad = cut(shape, src, me, P, g);
          }
          EXPECT_EQ(connect_backward<float>(world, shape, src, dst, connection, dst_grad), want_grad)
              << where << ": backward";
        }
}

TEST(HybridConnections, BridgeMovesTheBlobAndItsGradientBetweenTwoRanks) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const int src = world.size() - 1, dst = 0;  // one rank on one rank: the blob itself
  const std::vector<float> blob = {1, 2, 3, 4, 5}, g = {-1, -2, -3, -4, -5};
  if (world.rank() == src || world.rank() == dst) {
    const auto got = bridge_forward(world, src, dst,
                                    world.rank() == src ? std::span<const float>(blob) : std::span<const float>(), 5);
    EXPECT_EQ(got, blob);
    const auto back =
        bridge_backward(world, src, dst, world.rank() == dst ? std::span<const float>(g) : std::span<const float>(), 5);
    EXPECT_EQ(back, g);
  }
  world.barrier();
}

TEST(HybridConnections, APartOfTheWrongSizeIsRefused) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const std::vector<float> wrong(3);  // every rank: no part of a 7 x 5 blob has 3 values on 1, 2 or 4 ranks
  EXPECT_THROW(
      connect_forward<float>(world, {7, 5}, PartitionDim::kData, PartitionDim::kFeature, Connection::kOneToOne, wrong),
      Error);
}

}  // namespace
}  // namespace embscale::model
