// What a serve loop needs of a MessageChannel (probe, iprobe, recv_any: a server answering
// whichever rank asks first), on both transports (MpiMessageChannel, UcxMessageChannel), against
// messages whose source, tag, size and values every rank can compute. Rank 0 serves; the others
// send. Needs 2 or more ranks.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "comm/message_channel.hpp"
#include "comm/mpi_communicator.hpp"
#include "core/error.hpp"

namespace embscale::comm {
namespace {

class MessageChannel : public ::testing::TestWithParam<ChannelTransport> {};

constexpr std::size_t kRow = 2;  // values per row: the messages are rows of two int64

// Rows rank r sends in round `round`, and their values.
std::size_t rows_of(int rank, int round) { return static_cast<std::size_t>(rank + round); }
std::vector<std::int64_t> message_of(int rank, int round) {
  std::vector<std::int64_t> values(rows_of(rank, round) * kRow);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = 1000 * rank + 100 * round + static_cast<std::int64_t>(i);
  return values;
}

// Every round r: each rank but 0 sends rank 0 one message of tag 10 + rank; rank 0 takes them in
// whatever order they come (round 1 by probe then recv, round 2 by recv_any) and must see every
// sender once, with its size, tag and values.
TEST_P(MessageChannel, AServerTakesEveryRanksMessageInWhateverOrderTheyCome) {
  MpiCommunicator world(MPI_COMM_WORLD);
  const auto channel = open_message_channel(world, GetParam());
  if (world.size() < 2) GTEST_SKIP() << "needs >= 2 ranks";
  for (const int round : {1, 2}) {
    world.barrier();  // a round's messages only: round 2's would match round 1's any-tag probe
    if (world.rank() != 0) {
      const auto values = message_of(world.rank(), round);
      channel->send(std::span<const std::int64_t>(values), 0, 10 + world.rank(), kRow);
      continue;
    }
    std::set<int> seen;
    std::vector<std::int64_t> room(static_cast<std::size_t>(world.size() + round) * kRow, -1);
    for (int n = 1; n < world.size(); ++n) {
      MessageInfo info;
      if (round == 1) {
        info = channel->probe<std::int64_t>(kAnySource, kAnyTag, kRow);
        channel->recv(std::span<std::int64_t>(room).first(info.rows * kRow), info.source, info.tag, kRow);
      } else {
        info = channel->recv_any(std::span<std::int64_t>(room), kAnySource, kAnyTag, kRow);
      }
      ASSERT_GE(info.source, 1);
      ASSERT_LT(info.source, world.size());
      EXPECT_TRUE(seen.insert(info.source).second) << "rank " << info.source << " twice";
      EXPECT_EQ(info.tag, 10 + info.source);
      ASSERT_EQ(info.rows, rows_of(info.source, round));
      EXPECT_EQ(std::vector<std::int64_t>(room.begin(), room.begin() + static_cast<std::ptrdiff_t>(info.rows * kRow)),
                message_of(info.source, round))
          << "round " << round << ", from rank " << info.source;
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(world.size() - 1));
  }
  world.barrier();
}

// iprobe finds nothing where nothing was sent, then, polled, finds rank 1's message by its source
// and tag (the others' tags are not matched).
TEST_P(MessageChannel, IprobeSaysNothingIsWaitingThenFindsTheMessage) {
  MpiCommunicator world(MPI_COMM_WORLD);
  const auto channel = open_message_channel(world, GetParam());
  if (world.size() < 2) GTEST_SKIP() << "needs >= 2 ranks";
  if (world.rank() == 0) {
    EXPECT_FALSE(channel->iprobe<std::int64_t>(kAnySource, kAnyTag).has_value());
  }
  world.barrier();
  const std::vector<std::int64_t> values = {7, 8, 9};
  if (world.rank() == 1) channel->send(std::span<const std::int64_t>(values), 0, 3);
  if (world.rank() == 0) {
    std::optional<MessageInfo> info;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!(info = channel->iprobe<std::int64_t>(1, 3)) && std::chrono::steady_clock::now() < give_up) {}
    ASSERT_TRUE(info.has_value()) << "no message from rank 1 within 30 s";
    EXPECT_EQ(info->source, 1);
    EXPECT_EQ(info->tag, 3);
    EXPECT_EQ(info->rows, 3u);
    std::vector<std::int64_t> got(3);
    channel->recv(std::span<std::int64_t>(got), 1, 3);
    EXPECT_EQ(got, values);
  }
  world.barrier();
}

// A message larger than recv_any's buffer is refused with both sizes and stays to be received; a
// message that is not a whole number of the receiver's rows is refused by probe, naming its bytes.
TEST_P(MessageChannel, RefusalsNameTheSizesAndLeaveTheMessage) {
  MpiCommunicator world(MPI_COMM_WORLD);
  const auto channel = open_message_channel(world, GetParam());
  if (world.size() < 2) GTEST_SKIP() << "needs >= 2 ranks";
  const std::vector<std::int64_t> five = {1, 2, 3, 4, 5};
  if (world.rank() == 1) channel->send(std::span<const std::int64_t>(five), 0, 4);
  if (world.rank() == 0) {
    std::vector<std::int64_t> small(3), whole(5);
    try {
      channel->recv_any(std::span<std::int64_t>(small), kAnySource, 4);
      ADD_FAILURE() << "a 5-row message into room for 3 was not refused";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("rank 1"), std::string::npos) << what;
      EXPECT_NE(what.find("5 rows"), std::string::npos) << what;
      EXPECT_NE(what.find("room for 3"), std::string::npos) << what;
    }
    try {
      channel->probe<std::int64_t>(1, 4, 3);  // rows of 3 values: 40 bytes are not whole rows of 24
      ADD_FAILURE() << "40 bytes were taken as whole rows of 24";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("40 bytes"), std::string::npos) << e.what();
    }
    const MessageInfo info = channel->recv_any(std::span<std::int64_t>(whole), 1, 4);
    EXPECT_EQ(info.rows, 5u);
    EXPECT_EQ(whole, five);
  }
  world.barrier();
}

// A channel's messages travel apart from its group's own point-to-point messages of the same tag
// (a duplicate communicator), and its traffic is counted on the channel.
TEST_P(MessageChannel, ItsMessagesNeverMeetTheGroupsAndAreCountedApart) {
  MpiCommunicator world(MPI_COMM_WORLD);
  if (world.size() < 2) GTEST_SKIP() << "needs >= 2 ranks";
  const auto channel = open_message_channel(world, GetParam());
  const auto channel_before = channel->stats().total();
  const auto world_before = world.stats().total();
  if (world.rank() == 1) {
    const std::int64_t on_world = 11, on_channel = 22;
    world.send(std::span<const std::int64_t>(&on_world, 1), 0, 7);
    channel->send(std::span<const std::int64_t>(&on_channel, 1), 0, 7);
  } else if (world.rank() == 0) {
    std::int64_t got = 0;
    const MessageInfo info = channel->recv_any(std::span<std::int64_t>(&got, 1), kAnySource, 7);
    EXPECT_EQ(got, 22);  // the channel's, although the world's was sent first
    EXPECT_EQ(info.source, 1);
    world.recv(std::span<std::int64_t>(&got, 1), 1, 7);
    EXPECT_EQ(got, 11);
    EXPECT_EQ(channel->stats().total().bytes_recv - channel_before.bytes_recv, sizeof(std::int64_t));
    EXPECT_EQ(world.stats().total().bytes_recv - world_before.bytes_recv, sizeof(std::int64_t));
  }
  world.barrier();
}

// The transport says what carried the messages: "mpi", or UCX with the lanes UCP selected.
TEST_P(MessageChannel, SaysWhatCarriesItsMessages) {
  MpiCommunicator world(MPI_COMM_WORLD);
  const auto channel = open_message_channel(world, GetParam());
  const std::string details = channel->transport_details();
  if (GetParam() == ChannelTransport::kMpi) EXPECT_EQ(details, "mpi");
  else if (world.size() > 1) EXPECT_NE(details.find("ucx: lane["), std::string::npos) << details;
  world.barrier();
}

INSTANTIATE_TEST_SUITE_P(Transports, MessageChannel, ::testing::Values(ChannelTransport::kMpi, ChannelTransport::kUcx),
                         [](const ::testing::TestParamInfo<ChannelTransport>& info) {
                           return std::string(to_string(info.param));
                         });

}  // namespace
}  // namespace embscale::comm
