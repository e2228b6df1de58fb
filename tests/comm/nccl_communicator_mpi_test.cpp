// NcclCommunicator's own contract on the stand-in NCCL (tests/device/fake_nccl.cpp), on 1, 2 and 4
// ranks: the bootstrap (one id for all, a rank that cannot use NCCL refused on every rank with its
// message), splits, the host side, and point-to-point matched in call order (NCCL has no tags).
// The collectives themselves are held to the reference in communicator_ops_mpi_test and
// communicator_mpi_test, which run every case on this backend too.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "../device/scoped_env.hpp"
#include "comm/mpi_communicator.hpp"
#include "comm/nccl_communicator.hpp"
#include "core/error.hpp"
#include "device/device_library.hpp"
#include "device/device_resources.hpp"

namespace embscale::comm {
namespace {

device::DeviceLibrary fake() { return device::DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE); }

TEST(NcclCommunicator, BootstrapsOneRankPerHostRank) {
  MpiCommunicator world(MPI_COMM_WORLD);
  const auto nccl = NcclCommunicator::bootstrap(world, fake(), nullptr);
  EXPECT_EQ(nccl->rank(), world.rank());
  EXPECT_EQ(nccl->size(), world.size());
  EXPECT_EQ(nccl->nccl_version(), 21099) << "the stand-in's version";
  EXPECT_EQ(nccl->native_handle().kind, "nccl");
  EXPECT_NE(nccl->native_handle().handle, nullptr);
  EXPECT_EQ(nccl->memory_space(), MemorySpace::kDevice);
  EXPECT_EQ(&nccl->host_communicator(), &world);
  EXPECT_EQ(world.memory_space(), MemorySpace::kHost);
  EXPECT_EQ(&world.host_communicator(), &world);
  // Two communicators over the same ranks stay apart (each its own id).
  const auto second = NcclCommunicator::bootstrap(world, fake(), nullptr);
  std::vector<int> a{world.rank()}, b{10 * world.rank()}, sum_a(1), sum_b(1);
  second->allreduce(std::span<const int>(b), std::span<int>(sum_b), ReduceOp::kSum);
  nccl->allreduce(std::span<const int>(a), std::span<int>(sum_a), ReduceOp::kSum);
  const int ranks = world.size();
  EXPECT_EQ(sum_a[0], ranks * (ranks - 1) / 2);
  EXPECT_EQ(sum_b[0], 10 * ranks * (ranks - 1) / 2);
  nccl->barrier();
}

// The last rank opens a library without the family: every rank fails with its message, before
// any rank waits in NCCL's initialisation (the ctest timeout would catch a hang).
TEST(NcclCommunicator, ARankThatCannotUseNcclIsRefusedOnEveryRank) {
  MpiCommunicator world(MPI_COMM_WORLD);
  const int last = world.size() - 1;
  const auto library = device::DeviceLibrary::open(world.rank() == last ? EMBSCALE_TEST_FAKE_DEVICE_LACKING_NCCL
                                                                        : EMBSCALE_TEST_FAKE_DEVICE);
  try {
    (void)NcclCommunicator::bootstrap(world, library, nullptr);
    ADD_FAILURE() << "a rank without NCCL joined";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.starts_with("rank " + std::to_string(last) + " cannot use NCCL: ")) << message;
    EXPECT_NE(message.find("kernel family nccl"), std::string::npos) << message;
  }
}

TEST(NcclCommunicator, SplitsAreNcclCommunicatorsOverTheHostsSplit) {
  MpiCommunicator world(MPI_COMM_WORLD);
  const auto nccl = NcclCommunicator::bootstrap(world, fake(), nullptr);
  const auto halves = nccl->split(world.rank() % 2, world.rank());
  EXPECT_EQ(halves->size(), (world.size() + 1 - world.rank() % 2) / 2);
  EXPECT_EQ(halves->rank(), world.rank() / 2);
  EXPECT_EQ(halves->native_handle().kind, "nccl");
  EXPECT_EQ(halves->host_communicator().size(), halves->size());
  std::vector<int> mine{world.rank()}, all(static_cast<std::size_t>(halves->size()));
  halves->allgather(std::span<const int>(mine), std::span<int>(all));
  for (int r = 0; r < halves->size(); ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], 2 * r + world.rank() % 2);
  const auto host = nccl->split_by_host();
  EXPECT_EQ(host->size(), world.size());  // the tests run on one host
  EXPECT_EQ(host->native_handle().kind, "nccl");
}

// NCCL reads and writes device memory only: with the stand-in strict about it, a host vector is
// refused by name, a device buffer of the library passes, and the value helpers (host values)
// go over the host communicator, as they must.
TEST(NcclCommunicator, HostBuffersAreRefusedAndHostValuesGoOverTheHostSide) {
  MpiCommunicator world(MPI_COMM_WORLD);
  const auto library = fake();
  const auto nccl = NcclCommunicator::bootstrap(world, library, nullptr);
  const embscale::testing::ScopedEnv strict("EMBSCALE_FAKE_STRICT_DEVICE_MEMORY", "1");
  std::vector<float> host(4, 1.0f);
  bool refused = false;
  try {
    nccl->allreduce(std::span<const float>(host), std::span<float>(host), ReduceOp::kSum);
  } catch (const Error& e) {
    refused = std::string(e.what()).find("a buffer in host memory") != std::string::npos;
  }
  // Every rank refused alone, before any transfer: nothing is left in flight.
  EXPECT_TRUE(refused);
  device::DeviceBuffer buffer(library, 4 * sizeof(float));
  buffer.copy_from_host(host.data(), 4 * sizeof(float), nullptr);
  auto* on_device = static_cast<float*>(buffer.data());
  nccl->allreduce(std::span<const float>(on_device, 4), std::span<float>(on_device, 4), ReduceOp::kSum);
  buffer.copy_to_host(host.data(), 4 * sizeof(float), nullptr);
  EXPECT_EQ(host, std::vector<float>(4, static_cast<float>(world.size())));
  EXPECT_EQ(nccl->allreduce(2, ReduceOp::kSum), 2 * world.size());
  EXPECT_EQ(nccl->allgather(world.rank()).size(), static_cast<std::size_t>(world.size()));
  EXPECT_EQ(broadcast_strings(*nccl, {world.rank() == 0 ? "from rank 0" : ""})[0], "from rank 0");
}

// NCCL's send waits for its receive: two ranks that both send first would hang on NCCL, and the
// stand-in says so (after its timeout, here 1 s) instead of letting the pattern pass on host memory.
TEST(NcclCommunicator, SendsThatWouldHangOnNcclFailOnTheStandIn) {
  MpiCommunicator world(MPI_COMM_WORLD);
  if (world.size() != 2) GTEST_SKIP() << "a pair of ranks";
  const auto nccl = NcclCommunicator::bootstrap(world, fake(), nullptr);
  const embscale::testing::ScopedEnv timeout("EMBSCALE_FAKE_NCCL_TIMEOUT", "1");
  const std::vector<std::int32_t> out(8, world.rank());
  std::vector<std::int32_t> in(8);
  const int peer = 1 - world.rank();
  try {
    nccl->send(std::span<const std::int32_t>(out), peer, 0);
    nccl->recv(std::span<std::int32_t>(in), peer, 0);
    ADD_FAILURE() << "both ranks sent first and it passed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NCCL would hang"), std::string::npos) << e.what();
  }
}

// Without tags, a pair's messages match in the order they were issued: the receiver that asks
// for tag 2 first gets the first message sent, whatever its tag.
TEST(NcclCommunicator, PointToPointMatchesInCallOrder) {
  MpiCommunicator world(MPI_COMM_WORLD);
  if (world.size() < 2) GTEST_SKIP() << "needs >= 2 ranks";
  const auto nccl = NcclCommunicator::bootstrap(world, fake(), nullptr);
  const std::vector<std::int32_t> a(5, 111), b(5, 222);
  if (world.rank() == 0) {
    nccl->send(std::span<const std::int32_t>(a), 1, 1);
    nccl->send(std::span<const std::int32_t>(b), 1, 2);
  } else if (world.rank() == 1) {
    std::vector<std::int32_t> first(5), second(5);
    nccl->recv(std::span<std::int32_t>(first), 0, 2);
    nccl->recv(std::span<std::int32_t>(second), 0, 1);
    EXPECT_EQ(first, a);
    EXPECT_EQ(second, b);
  }
  nccl->barrier();
}

}  // namespace
}  // namespace embscale::comm
