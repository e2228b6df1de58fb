// RemoteWindow (one-sided reads of memory other ranks expose), on both transports (MPI's RMA,
// UCX's gets), against bytes every rank can compute: random ranges of every other rank's region,
// the bounds refused by size, gets counted, and the owner's publish ordering its writes (a reader
// that sees a clock never reads data older than it). Needs 2 or more ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "comm/message_channel.hpp"
#include "comm/mpi_communicator.hpp"
#include "core/error.hpp"

namespace embscale::comm {
namespace {

class RemoteWindows : public ::testing::TestWithParam<ChannelTransport> {};

// Rank r exposes 1000 * r bytes (rank 0 none); byte i of rank r's region is (7 r + i) mod 251.
std::vector<std::byte> region_of(int rank) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(1000 * rank));
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>((7 * rank + i) % 251);
  return bytes;
}

TEST_P(RemoteWindows, EveryRankReadsRandomRangesOfEveryOthersRegion) {
  MpiCommunicator world(MPI_COMM_WORLD);
  if (world.size() < 2) GTEST_SKIP() << "needs >= 2 ranks";
  const auto channel = open_message_channel(world, GetParam());
  const std::vector<std::byte> own = region_of(world.rank());
  {
    const auto window = channel->expose(own.size());
    ASSERT_EQ(window->local().size(), own.size());
    std::copy(own.begin(), own.end(), window->local().begin());
    window->publish();
    world.barrier();  // every region written before any rank reads
    std::mt19937_64 random(99 + static_cast<std::uint64_t>(world.rank()));
    struct Read {
      int target;
      std::size_t offset;
      std::vector<std::byte> into;
    };
    std::vector<Read> reads;
    for (int target = 0; target < world.size(); ++target) {
      ASSERT_EQ(window->exposed_bytes(target), static_cast<std::size_t>(1000 * target));
      if (target == 0) continue;
      for (int n = 0; n < 20; ++n) {
        const std::size_t size = 1000 * static_cast<std::size_t>(target);
        const std::size_t offset = random() % size;
        reads.push_back({target, offset, std::vector<std::byte>(1 + random() % (size - offset))});
      }
    }
    const std::uint64_t before = channel->stats().total().bytes_recv;
    std::uint64_t bytes = 0;
    for (Read& read : reads) {
      window->get(read.target, read.offset, read.into.data(), read.into.size());
      bytes += read.into.size();
    }
    window->flush();
    EXPECT_EQ(channel->stats().total().bytes_recv - before, bytes) << "the gets' bytes, counted by flush";
    for (const Read& read : reads) {
      const std::vector<std::byte> want = region_of(read.target);
      for (std::size_t i = 0; i < read.into.size(); ++i)
        ASSERT_EQ(read.into[i], want[read.offset + i])
            << "rank " << world.rank() << " reading rank " << read.target << " at " << read.offset + i;
    }
    // Beyond a region: an Error naming its size; rank 0 exposes nothing at all.
    const int last = world.size() - 1;
    std::byte one{};
    try {
      window->get(last, 1000 * static_cast<std::size_t>(last), &one, 1);
      ADD_FAILURE() << "a get past the region was taken";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("holds " + std::to_string(1000 * last)), std::string::npos) << e.what();
    }
    EXPECT_THROW(window->get(0, 0, &one, 1), Error);
    world.barrier();  // nobody reads any more: the windows close together
  }
}

// Rank 0 owns data (kWords int64) and a clock. For version v = 1 .. kVersions it writes v into
// every word, publishes, then sets the clock to v and publishes again. Every other rank polls the
// clock and reads the data after it: each word must be at least the clock it saw (a read may
// catch later versions, never an earlier one).
TEST_P(RemoteWindows, AReaderThatSeesTheClockSeesTheDataPublishedBeforeIt) {
  MpiCommunicator world(MPI_COMM_WORLD);
  if (world.size() < 2) GTEST_SKIP() << "needs >= 2 ranks";
  const auto channel = open_message_channel(world, GetParam());
  constexpr std::size_t kWords = 512;
  constexpr std::int64_t kVersions = 200;
  const bool owner = world.rank() == 0;
  const auto data_window = channel->expose(owner ? kWords * sizeof(std::int64_t) : 0);
  const auto clock_window = channel->expose(owner ? sizeof(std::int64_t) : 0);
  // The owner's words and clock live in the windows' memory.
  const std::span<std::int64_t> data(reinterpret_cast<std::int64_t*>(data_window->local().data()), owner ? kWords : 0);
  auto* const clock = owner ? reinterpret_cast<std::atomic<std::int64_t>*>(clock_window->local().data()) : nullptr;
  world.barrier();
  if (owner) {
    for (std::int64_t v = 1; v <= kVersions; ++v) {
      for (auto& word : data) word = v;
      data_window->publish();
      clock->store(v, std::memory_order_release);
      clock_window->publish();
    }
  } else {
    std::int64_t seen = 0;
    std::vector<std::int64_t> read(kWords);
    std::int64_t checks = 0;
    while (seen < kVersions) {
      clock_window->get(0, 0, &seen, sizeof seen);
      clock_window->flush();
      data_window->get(0, 0, read.data(), kWords * sizeof(std::int64_t));
      data_window->flush();
      for (std::size_t i = 0; i < kWords; ++i)
        ASSERT_GE(read[i], seen) << "word " << i << " older than the clock read before it";
      ++checks;
    }
    EXPECT_GT(checks, 0);
  }
  world.barrier();
}

INSTANTIATE_TEST_SUITE_P(Transports, RemoteWindows, ::testing::Values(ChannelTransport::kMpi, ChannelTransport::kUcx),
                         [](const auto& param_info) { return std::string(to_string(param_info.param)); });

}  // namespace
}  // namespace embscale::comm
