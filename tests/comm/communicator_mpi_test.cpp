// The Communicator against values every rank can compute by itself, on every backend
// (backends.hpp): MPI with its native int counts, MPI with the per-message limit lowered to 3 rows
// so the large-count schedules (used beyond 2^31 rows) run on small data, and NCCL (the stand-in).
// Cases that need MPI's tags or its independent progress of point-to-point calls on one rank say
// so and skip NCCL, which has neither.
#include <gtest/gtest.h>
#include <mpi.h>

#include <numeric>

#include "backends.hpp"
#include "comm/mpi_communicator.hpp"

namespace embscale::comm {
namespace {

using testing::Backend;

class CommunicatorMpi : public ::testing::TestWithParam<Backend> {
 protected:
  CommunicatorMpi() : backend(GetParam()), world(backend.get()) {}
  std::size_t R() const { return static_cast<std::size_t>(world.size()); }
  std::size_t me() const { return static_cast<std::size_t>(world.rank()); }
  testing::BackendWorld backend;
  Communicator& world;
};

// NCCL matches a pair's messages in call order and runs a rank's calls in order on its stream:
// a case that relies on tags, or on a receive posted before a send on every rank, cannot run there.
#define SKIP_ON_NCCL(why) \
  if (GetParam().nccl) GTEST_SKIP() << "NCCL: " << why

// Rows that rank `from` sends to rank `to` in the alltoallv tests: (from + 2 * to) % 5 rows of
// dim 3, a mix of empty, short and longer-than-the-limit messages.
std::size_t rows_between(std::size_t from, std::size_t to) { return (from + 2 * to) % 5; }
double value_of(std::size_t from, std::size_t to, std::size_t row, std::size_t d) {
  return 1000.0 * static_cast<double>(from) + 100.0 * static_cast<double>(to) + 10.0 * static_cast<double>(row) +
         static_cast<double>(d);
}

TEST_P(CommunicatorMpi, AlltoallvDeliversRowsInRankOrderBlockingAndNot) {
  constexpr std::size_t dim = 3;
  std::vector<std::size_t> send_counts(R()), recv_counts(R());
  std::vector<double> send;
  for (std::size_t to = 0; to < R(); ++to) {
    send_counts[to] = rows_between(me(), to);
    recv_counts[to] = rows_between(to, me());
    for (std::size_t row = 0; row < send_counts[to]; ++row)
      for (std::size_t d = 0; d < dim; ++d) send.push_back(value_of(me(), to, row, d));
  }
  std::vector<double> expected;
  for (std::size_t from = 0; from < R(); ++from)
    for (std::size_t row = 0; row < recv_counts[from]; ++row)
      for (std::size_t d = 0; d < dim; ++d) expected.push_back(value_of(from, me(), row, d));

  std::vector<double> recv(expected.size(), -1.0);
  world.alltoallv(std::span<const double>(send), std::span<const std::size_t>(send_counts), std::span<double>(recv),
                  std::span<const std::size_t>(recv_counts), dim);
  EXPECT_EQ(recv, expected);

  std::vector<double> recv2(expected.size(), -1.0);
  Request r = world.ialltoallv(std::span<const double>(send), std::span<const std::size_t>(send_counts),
                               std::span<double>(recv2), std::span<const std::size_t>(recv_counts), dim);
  r.wait();
  EXPECT_FALSE(r.pending());
  EXPECT_EQ(recv2, expected);
}

TEST_P(CommunicatorMpi, AlltoallCountsTrafficToOtherRanksOnly) {
  world.stats().reset();
  std::vector<std::int64_t> send(R() * 4), recv(R() * 4);
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = static_cast<std::int64_t>(me() * 100 + i);
  world.alltoall(std::span<const std::int64_t>(send), std::span<std::int64_t>(recv), 4);
  for (std::size_t from = 0; from < R(); ++from)
    for (std::size_t j = 0; j < 4; ++j)
      EXPECT_EQ(recv[from * 4 + j], static_cast<std::int64_t>(from * 100 + me() * 4 + j));
  // With the lowered message limit, 4 rows per rank exceed it and alltoall takes alltoallv's path.
  const std::size_t limit = GetParam().message_limit;
  const auto s = world.stats().by_op().at(limit != 0 && 4 * R() > limit ? "alltoallv" : "alltoall");
  EXPECT_EQ(s.calls, 1u);
  EXPECT_EQ(s.bytes_sent, (R() - 1) * 4 * sizeof(std::int64_t));
  EXPECT_EQ(s.bytes_recv, (R() - 1) * 4 * sizeof(std::int64_t));
}

TEST_P(CommunicatorMpi, AllreduceSumMaxMin) {
  std::vector<std::int64_t> send(10), sum(10), max(10);
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = static_cast<std::int64_t>(me() * i);
  world.allreduce(std::span<const std::int64_t>(send), std::span<std::int64_t>(sum), ReduceOp::kSum);
  Request r = world.iallreduce(std::span<const std::int64_t>(send), std::span<std::int64_t>(max), ReduceOp::kMax);
  r.wait();
  const auto ranks_sum = static_cast<std::int64_t>(R() * (R() - 1) / 2);
  for (std::size_t i = 0; i < send.size(); ++i) {
    EXPECT_EQ(sum[i], ranks_sum * static_cast<std::int64_t>(i));
    EXPECT_EQ(max[i], static_cast<std::int64_t>((R() - 1) * i));
  }
  EXPECT_DOUBLE_EQ(world.allreduce(static_cast<double>(me()) + 0.5, ReduceOp::kMin), 0.5);
}

TEST_P(CommunicatorMpi, ReduceScatterGivesEachRankItsReducedSegment) {
  constexpr std::size_t dim = 2;
  std::vector<std::size_t> counts(R());
  for (std::size_t r = 0; r < R(); ++r) counts[r] = r + 2;  // rows for rank r
  const std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  std::vector<float> send(total * dim);
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = static_cast<float>(i + me());
  std::vector<float> recv(counts[me()] * dim);
  world.reduce_scatter(std::span<const float>(send), std::span<float>(recv), std::span<const std::size_t>(counts),
                       ReduceOp::kSum, dim);
  const std::size_t offset =
      std::accumulate(counts.begin(), counts.begin() + static_cast<long>(me()), std::size_t{0}) * dim;
  for (std::size_t i = 0; i < recv.size(); ++i)
    EXPECT_FLOAT_EQ(recv[i], static_cast<float>(R() * (offset + i) + R() * (R() - 1) / 2));
}

TEST_P(CommunicatorMpi, GathervAllgathervAndBcast) {
  std::vector<std::size_t> counts(R());
  for (std::size_t r = 0; r < R(); ++r) counts[r] = 2 * r + 1;
  std::vector<std::int32_t> mine(counts[me()], static_cast<std::int32_t>(me()));
  std::vector<std::int32_t> expected;
  for (std::size_t r = 0; r < R(); ++r) expected.insert(expected.end(), counts[r], static_cast<std::int32_t>(r));

  std::vector<std::int32_t> all(expected.size(), -1);
  world.allgatherv(std::span<const std::int32_t>(mine), std::span<std::int32_t>(all),
                   std::span<const std::size_t>(counts));
  EXPECT_EQ(all, expected);

  const int root = world.size() - 1;
  std::vector<std::int32_t> gathered(world.rank() == root ? expected.size() : 0, -1);
  world.gatherv(std::span<const std::int32_t>(mine), std::span<std::int32_t>(gathered),
                std::span<const std::size_t>(counts), root);
  if (world.rank() == root) {
    EXPECT_EQ(gathered, expected);
  }

  std::vector<double> data(7, world.rank() == root ? 3.25 : 0.0);
  world.bcast(std::span<double>(data), root);
  EXPECT_EQ(data, std::vector<double>(7, 3.25));
  EXPECT_EQ(world.allgather(world.rank() * 3), [&] {
    std::vector<int> v(R());
    for (std::size_t r = 0; r < R(); ++r) v[r] = static_cast<int>(r) * 3;
    return v;
  }());
}

TEST_P(CommunicatorMpi, SendRecvRingBlockingAndNonBlocking) {
  if (world.size() < 2) GTEST_SKIP() << "needs >= 2 ranks";
  SKIP_ON_NCCL("every rank's receive is queued before its send (sendrecv is NCCL's ring)");
  const int next = (world.rank() + 1) % world.size();
  const int prev = (world.rank() + world.size() - 1) % world.size();
  std::vector<std::uint64_t> out(8, me()), in(8, 99);
  Request rr = world.irecv(std::span<std::uint64_t>(in), prev, 5);
  world.send(std::span<const std::uint64_t>(out), next, 5);
  rr.wait();
  EXPECT_EQ(in, std::vector<std::uint64_t>(8, static_cast<std::uint64_t>(prev)));
}

TEST_P(CommunicatorMpi, LargeSendsKeepTheirTagsWhateverTheReceiveOrder) {
  if (world.size() < 2) GTEST_SKIP() << "needs >= 2 ranks";
  SKIP_ON_NCCL("no tags (nccl_communicator_mpi_test holds the call-order matching instead)");
  std::vector<std::int32_t> a(8, 111), b(8, 222);
  if (world.rank() == 0) {
    Request ra = world.isend(std::span<const std::int32_t>(a), 1, 1);
    Request rb = world.isend(std::span<const std::int32_t>(b), 1, 2);
    ra.wait();
    rb.wait();
  } else if (world.rank() == 1) {
    std::vector<std::int32_t> got_b(8, 0), got_a(8, 0);
    Request rb = world.irecv(std::span<std::int32_t>(got_b), 0, 2);  // the later message first
    Request ra = world.irecv(std::span<std::int32_t>(got_a), 0, 1);
    rb.wait();
    ra.wait();
    EXPECT_EQ(got_a, a);
    EXPECT_EQ(got_b, b);
  }
}

// An ialltoallv must return without waiting for the other ranks: here rank 1 reaches its
// ialltoallv only after rank 0 has received a message rank 0 posts after its own ialltoallv.
// A blocking agreement inside ialltoallv deadlocks this (the ctest timeout would catch it).
TEST_P(CommunicatorMpi, IalltoallvReturnsBeforeThePeersArrive) {
  if (world.size() < 2) GTEST_SKIP() << "needs >= 2 ranks";
  SKIP_ON_NCCL("a rank's calls run in order on its stream: rank 0's receive waits behind its exchange");
  std::vector<std::size_t> counts(R(), 2);
  std::vector<std::int64_t> send(R() * 2, static_cast<std::int64_t>(me())), recv(R() * 2, -1);
  // 8 MiB in rows of 4096 doubles: rendezvous-sized, so the send needs the posted receive.
  std::vector<double> big(1 << 20, 1.5);
  constexpr std::size_t kRow = 4096;
  const auto exchange = [&] {
    return world.ialltoallv(std::span<const std::int64_t>(send), std::span<const std::size_t>(counts),
                            std::span<std::int64_t>(recv), std::span<const std::size_t>(counts));
  };
  if (world.rank() == 0) {
    Request r = exchange();
    world.recv(std::span<double>(big), 1, 9, kRow);
    r.wait();
  } else if (world.rank() == 1) {
    world.send(std::span<const double>(big), 0, 9, kRow);
    Request r = exchange();
    r.wait();
  } else {
    exchange().wait();
  }
  for (std::size_t from = 0; from < R(); ++from) EXPECT_EQ(recv[2 * from], static_cast<std::int64_t>(from));
}

INSTANTIATE_TEST_SUITE_P(Backends, CommunicatorMpi,
                         ::testing::Values(Backend{"native"}, Backend{"chunked", 3}, Backend{"nccl", 0, true},
                                           Backend{"staged", 0, false, true}),
                         testing::backend_name);

TEST(CommunicatorMpiSplit, ByColorAndByHost) {
  MpiCommunicator world(MPI_COMM_WORLD);
  const auto halves = world.split(world.rank() % 2, world.rank());
  EXPECT_EQ(halves->size(), (world.size() + 1 - world.rank() % 2) / 2);
  EXPECT_EQ(halves->rank(), world.rank() / 2);
  const auto host = world.split_by_host();
  EXPECT_EQ(host->size(), world.size());  // the tests run on one host
  EXPECT_EQ(host->native_handle().kind, "mpi");
  EXPECT_NE(host->native_handle().handle, nullptr);
}

}  // namespace
}  // namespace embscale::comm
