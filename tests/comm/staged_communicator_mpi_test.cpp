// StagedCommunicator's own contract on the stand-in device library (its device memory is host
// memory; the copies are the library's): where its buffers live, its host side, its splits, and a
// non-blocking call whose results reach the device buffer only when it completes. Its collectives
// are held to the reference in communicator_ops_mpi_test and communicator_mpi_test, which run every
// case on this backend too.
#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "comm/staged_communicator.hpp"
#include "device/device_library.hpp"

namespace embscale::comm {
namespace {

device::DeviceLibrary fake() { return device::DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE); }

TEST(StagedCommunicator, DeviceBuffersOverMpiWithAHostSide) {
  StagedCommunicator staged(MPI_COMM_WORLD, fake(), nullptr);
  MpiCommunicator world(MPI_COMM_WORLD);
  EXPECT_EQ(staged.memory_space(), MemorySpace::kDevice);
  EXPECT_EQ(staged.native_handle().kind, "mpi");
  Communicator& host = staged.host_communicator();
  EXPECT_NE(&host, static_cast<Communicator*>(&staged));
  EXPECT_EQ(host.memory_space(), MemorySpace::kHost);
  EXPECT_EQ(host.size(), world.size());
  EXPECT_EQ(host.allreduce(world.rank(), ReduceOp::kSum), world.size() * (world.size() - 1) / 2);
  const auto halves = staged.split(world.rank() % 2, world.rank());
  EXPECT_EQ(halves->memory_space(), MemorySpace::kDevice);
  EXPECT_EQ(halves->size(), (world.size() + 1 - world.rank() % 2) / 2);
  EXPECT_EQ(halves->allreduce(1, ReduceOp::kSum), halves->size());
  EXPECT_EQ(staged.split_by_host()->memory_space(), MemorySpace::kDevice);
}

// The result is copied to the caller's buffer when the call completes, not before: the staging
// buffer is the request's own.
TEST(StagedCommunicator, ANonBlockingCallDeliversOnCompletion) {
  StagedCommunicator staged(MPI_COMM_WORLD, fake(), nullptr);
  const std::vector<float> mine(6, 1.5f);
  std::vector<float> sum(6, -1.0f), other(6, -1.0f);
  Request first = staged.iallreduce(std::span<const float>(mine), std::span<float>(sum), ReduceOp::kSum);
  Request second = staged.iallreduce(std::span<const float>(mine), std::span<float>(other), ReduceOp::kMax);
  second.wait();
  first.wait();
  EXPECT_EQ(sum, std::vector<float>(6, 1.5f * static_cast<float>(staged.size())));
  EXPECT_EQ(other, std::vector<float>(6, 1.5f));
}

}  // namespace
}  // namespace embscale::comm
