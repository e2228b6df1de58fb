// The Communicator's NCCL-style operations over MPI (allreduce, reduce, reduce_scatter_block,
// reduce_scatter, allgather, sendrecv) for every DataType and ReduceOp, against a reference every
// rank computes alone. Values keep every result exact: small integers (so Half and BFloat16 sums
// are exact whatever the order), products of 1, -1 and 2. Integer sums may wrap (int8 does), and
// the reference wraps the same way (C++20 conversions to a narrower integer are modular).
// Each case runs on every backend (backends.hpp): MPI with its native counts, MPI with the
// per-message limit lowered to 2 (so the large-count schedules run on small data), and NCCL.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "backends.hpp"
#include "comm/mpi_communicator.hpp"

namespace embscale::comm {
namespace {

template <class T> T make(std::int64_t v) {
  if constexpr (std::is_same_v<T, Half>) return to_half(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, BFloat16>) return to_bfloat16(static_cast<float>(v));
  else return static_cast<T>(v);
}
template <class T> double shown(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return static_cast<double>(to_float(v));
  else return static_cast<double>(v);
}
// kAvg's definition, written independently: the (wrapped) sum divided in the element type.
template <class T> T average(T sum, int ranks) {
  if constexpr (std::is_same_v<T, Half>) return to_half(to_float(sum) / static_cast<float>(ranks));
  else if constexpr (std::is_same_v<T, BFloat16>) return to_bfloat16(to_float(sum) / static_cast<float>(ranks));
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<std::int64_t>(sum) / ranks);
  else return sum / static_cast<T>(ranks);
}

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kProd: return "prod";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
    case ReduceOp::kAvg: return "avg";
  }
  return "?";
}
constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kAvg};

// Rank `rank`'s value at index i. Sums and extremes: -20..40 (0..60 unsigned), so 4 ranks'
// int8 sums wrap and every partial sum stays an exact bfloat16. Products: 1, -1, 2 (1, 2 unsigned).
template <class T> std::int64_t value(ReduceOp op, std::size_t rank, std::size_t i) {
  if (op == ReduceOp::kProd) {
    const std::size_t k = (rank + i) % 3;
    if constexpr (std::is_unsigned_v<T>) return k == 1 ? 2 : 1;
    return k == 0 ? 1 : k == 1 ? -1 : 2;
  }
  const auto v = static_cast<std::int64_t>((rank * 37 + i * 11) % 61);
  return std::is_unsigned_v<T> ? v : v - 20;
}

template <class T> T reference(ReduceOp op, std::size_t ranks, std::size_t i) {
  std::int64_t acc = value<T>(op, 0, i);
  for (std::size_t r = 1; r < ranks; ++r) {
    const std::int64_t v = value<T>(op, r, i);
    acc = op == ReduceOp::kProd  ? acc * v
          : op == ReduceOp::kMax ? std::max(acc, v)
          : op == ReduceOp::kMin ? std::min(acc, v)
                                 : acc + v;
  }
  const T t = make<T>(acc);
  return op == ReduceOp::kAvg ? average(t, static_cast<int>(ranks)) : t;
}

template <class T> std::vector<T> contribution(ReduceOp op, std::size_t rank, std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = make<T>(value<T>(op, rank, i));
  return v;
}

// Expects got[i] == reference(op, ranks, first + i) for every i, naming the first mismatch.
template <class T>
void expect_reference(const std::vector<T>& got, std::size_t n, ReduceOp op, std::size_t ranks, std::size_t first,
                      const std::string& what) {
  ASSERT_GE(got.size(), n) << what;
  for (std::size_t i = 0; i < n; ++i) {
    const T want = reference<T>(op, ranks, first + i);
    if (!(got[i] == want)) {
      ADD_FAILURE() << what << ": element " << i << " is " << shown(got[i]) << ", expected " << shown(want);
      return;
    }
  }
}

template <class F> void for_each_type(F&& f) {
  f.template operator()<std::int8_t>("int8");
  f.template operator()<std::uint8_t>("uint8");
  f.template operator()<std::int32_t>("int32");
  f.template operator()<std::uint32_t>("uint32");
  f.template operator()<std::int64_t>("int64");
  f.template operator()<std::uint64_t>("uint64");
  f.template operator()<Half>("half");
  f.template operator()<float>("float");
  f.template operator()<double>("double");
  f.template operator()<BFloat16>("bfloat16");
}

using testing::Backend;

class CommunicatorOps : public ::testing::TestWithParam<Backend> {
 protected:
  CommunicatorOps() : backend(GetParam()), world(backend.get()) {}
  std::size_t R() const { return static_cast<std::size_t>(world.size()); }
  std::size_t me() const { return static_cast<std::size_t>(world.rank()); }
  // Element counts: not a multiple of the rank count (beyond 1 rank), and zero.
  std::vector<std::size_t> counts() const { return {2 * R() + 1, 0}; }
  testing::BackendWorld backend;
  Communicator& world;
};

TEST_P(CommunicatorOps, AllreduceEveryTypeAndOp) {
  for_each_type([&]<class T>(const char* type) {
    for (const ReduceOp op : kOps)
      for (const std::size_t n : counts())
        for (const bool blocking : {true, false})
          for (const bool in_place : {false, true}) {
            const std::string what = std::string("allreduce ") + type + " " + op_name(op) + " n=" + std::to_string(n) +
                                     (blocking ? " blocking" : " non-blocking") + (in_place ? " in place" : "");
            std::vector<T> send = contribution<T>(op, me(), n);
            std::vector<T> out(n, make<T>(99));
            std::vector<T>& recv = in_place ? send : out;
            if (blocking) {
              world.allreduce(std::span<const T>(send), std::span<T>(recv), op);
            } else {  // completed by test(), which must run kAvg's division as wait() does
              Request r = world.iallreduce(std::span<const T>(send), std::span<T>(recv), op);
              while (!r.test()) {}
              EXPECT_FALSE(r.pending()) << what;
            }
            expect_reference(recv, n, op, R(), 0, what);
          }
  });
}

TEST_P(CommunicatorOps, ReduceEveryTypeAndOpOnTheRootOnly) {
  const int root = world.size() - 1;
  for_each_type([&]<class T>(const char* type) {
    for (const ReduceOp op : kOps)
      for (const std::size_t n : counts())
        for (const bool blocking : {true, false})
          for (const bool in_place : {false, true}) {
            const std::string what = std::string("reduce ") + type + " " + op_name(op) + " n=" + std::to_string(n) +
                                     (blocking ? " blocking" : " non-blocking") + (in_place ? " in place" : "");
            const bool is_root = world.rank() == root;
            std::vector<T> send = contribution<T>(op, me(), n);
            std::vector<T> out(is_root ? n : 0, make<T>(99));
            std::vector<T>& recv = in_place && is_root ? send : out;
            if (blocking) world.reduce(std::span<const T>(send), std::span<T>(recv), op, root);
            else world.ireduce(std::span<const T>(send), std::span<T>(recv), op, root).wait();
            if (is_root) expect_reference(recv, n, op, R(), 0, what);
            else EXPECT_EQ(send, contribution<T>(op, me(), n)) << what << ": a non-root's input changed";
          }
  });
}

// Segment r of every rank's input holds the values of indices r * n .. r * n + n - 1, so rank r's
// result is the reference at those indices.
TEST_P(CommunicatorOps, ReduceScatterBlockEveryTypeAndOp) {
  for_each_type([&]<class T>(const char* type) {
    for (const ReduceOp op : kOps)
      for (const std::size_t n : {std::size_t{3}, std::size_t{0}})
        for (const bool blocking : {true, false})
          for (const bool in_place : {false, true}) {
            const std::string what = std::string("reduce_scatter_block ") + type + " " + op_name(op) +
                                     " n=" + std::to_string(n) + (blocking ? " blocking" : " non-blocking") +
                                     (in_place ? " in place" : "");
            std::vector<T> send = contribution<T>(op, me(), n * R());
            std::vector<T> out(n, make<T>(99));
            const std::span<T> recv = in_place ? std::span<T>(send.data(), n) : std::span<T>(out);
            if (blocking) world.reduce_scatter_block(std::span<const T>(send), recv, op);
            else world.ireduce_scatter_block(std::span<const T>(send), recv, op).wait();
            expect_reference(std::vector<T>(recv.begin(), recv.end()), n, op, R(), me() * n, what);
          }
  });
}

TEST_P(CommunicatorOps, ReduceScatterEveryTypeAndOp) {
  std::vector<std::size_t> rows(R());
  for (std::size_t r = 0; r < R(); ++r) rows[r] = r + 1;  // rows of 2 values for rank r
  std::size_t offset = 0, total = 0;
  for (std::size_t r = 0; r < R(); ++r) {
    if (r < me()) offset += rows[r] * 2;
    total += rows[r] * 2;
  }
  for_each_type([&]<class T>(const char* type) {
    for (const ReduceOp op : kOps)
      for (const bool blocking : {true, false}) {
        const std::string what =
            std::string("reduce_scatter ") + type + " " + op_name(op) + (blocking ? " blocking" : " non-blocking");
        const std::vector<T> send = contribution<T>(op, me(), total);
        std::vector<T> recv(rows[me()] * 2, make<T>(99));
        if (blocking)
          world.reduce_scatter(std::span<const T>(send), std::span<T>(recv), std::span<const std::size_t>(rows), op, 2);
        else
          world.ireduce_scatter(std::span<const T>(send), std::span<T>(recv), std::span<const std::size_t>(rows), op, 2)
              .wait();
        expect_reference(recv, recv.size(), op, R(), offset, what);
      }
  });
}

TEST_P(CommunicatorOps, AllgatherEveryType) {
  for_each_type([&]<class T>(const char* type) {
    for (const std::size_t n : {std::size_t{3}, std::size_t{0}})
      for (const bool blocking : {true, false})
        for (const bool in_place : {false, true}) {
          const std::string what = std::string("allgather ") + type + " n=" + std::to_string(n) +
                                   (blocking ? " blocking" : " non-blocking") + (in_place ? " in place" : "");
          const auto of = [](std::size_t rank, std::size_t i) {
            return make<T>(static_cast<std::int64_t>(rank * 10 + i));
          };
          std::vector<T> mine(n), recv(n * R(), make<T>(99));
          for (std::size_t i = 0; i < n; ++i) (in_place ? recv[me() * n + i] : mine[i]) = of(me(), i);
          const std::span<const T> send =
              in_place ? std::span<const T>(recv.data() + me() * n, n) : std::span<const T>(mine);
          if (blocking) world.allgather(send, std::span<T>(recv));
          else world.iallgather(send, std::span<T>(recv)).wait();
          for (std::size_t r = 0; r < R(); ++r)
            for (std::size_t i = 0; i < n; ++i)
              ASSERT_TRUE(recv[r * n + i] == of(r, i)) << what << ": rank " << r << " value " << i;
        }
  });
}

TEST_P(CommunicatorOps, SendrecvRingEveryType) {
  const int next = (world.rank() + 1) % world.size();
  const int prev = (world.rank() + world.size() - 1) % world.size();
  for_each_type([&]<class T>(const char* type) {
    for (const std::size_t n : {std::size_t{5}, std::size_t{0}})
      for (const bool blocking : {true, false}) {
        const std::string what =
            std::string("sendrecv ") + type + " n=" + std::to_string(n) + (blocking ? " blocking" : " non-blocking");
        const auto of = [](std::size_t rank, std::size_t i) {
          return make<T>(static_cast<std::int64_t>(rank * 10 + i));
        };
        std::vector<T> send(n), recv(n, make<T>(99));
        for (std::size_t i = 0; i < n; ++i) send[i] = of(me(), i);
        if (blocking) world.sendrecv(std::span<const T>(send), next, 3, std::span<T>(recv), prev, 3);
        else world.isendrecv(std::span<const T>(send), next, 3, std::span<T>(recv), prev, 3).wait();
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_TRUE(recv[i] == of(static_cast<std::size_t>(prev), i)) << what << ": value " << i;
      }
  });
}

TEST_P(CommunicatorOps, TrafficIsCountedPerOperation) {
  world.stats().reset();
  const std::size_t n = 4;
  std::vector<float> send(n * R(), 1.0f), recv(n * R());
  world.allgather(std::span<const float>(send.data(), n), std::span<float>(recv));
  world.reduce_scatter_block(std::span<const float>(send), std::span<float>(recv.data(), n), ReduceOp::kSum);
  world.reduce(std::span<const float>(send.data(), n), std::span<float>(recv.data(), n), ReduceOp::kSum, 0);
  const int next = (world.rank() + 1) % world.size();
  const int prev = (world.rank() + world.size() - 1) % world.size();
  world.sendrecv(std::span<const float>(send.data(), n), next, 1, std::span<float>(recv.data(), n), prev, 1);
  const auto& by_op = world.stats().by_op();
  const std::uint64_t payload = n * sizeof(float);
  const std::uint64_t others = R() - 1;
  EXPECT_EQ(by_op.at("allgather").bytes_sent, payload * others);
  EXPECT_EQ(by_op.at("allgather").bytes_recv, payload * others);
  EXPECT_EQ(by_op.at("reduce_scatter_block").bytes_sent, payload * R());
  EXPECT_EQ(by_op.at("reduce_scatter_block").bytes_recv, payload);
  EXPECT_EQ(by_op.at("reduce").bytes_sent, world.rank() == 0 ? 0 : payload);
  EXPECT_EQ(by_op.at("reduce").bytes_recv, world.rank() == 0 ? payload : 0);
  EXPECT_EQ(by_op.at("sendrecv").bytes_sent, world.size() == 1 ? 0 : payload);  // to self: not traffic
  EXPECT_EQ(by_op.at("sendrecv").calls, 1u);
  EXPECT_EQ(world.stats().total().calls, 4u);
}

INSTANTIATE_TEST_SUITE_P(Backends, CommunicatorOps,
                         ::testing::Values(Backend{"native"}, Backend{"chunked", 2}, Backend{"nccl", 0, true},
                                           Backend{"staged", 0, false, true}),
                         testing::backend_name);

// alltoallv's per-pair schedule (mpi_alltoallv.cpp) with the limit at 2 * ranks, so the threshold
// T is 2 rows: pairs of 9 rows travel point to point (in pieces of 2 * ranks rows), pairs of 1 in
// the collective. Each matrix puts a 9 before a 1 on one side only, so that side alone (and only
// there) has a collective displacement beyond the limit and packs.
struct Matrix {
  const char* name;
  std::size_t (*rows)(std::size_t from, std::size_t to);
};
constexpr Matrix kMatrices[] = {
    {"send side packs", [](std::size_t from, std::size_t to) -> std::size_t { return to < from ? 9 : 1; }},
    {"receive side packs", [](std::size_t from, std::size_t to) -> std::size_t { return to > from ? 9 : 1; }},
    {"self pair copied, both sides pack",
     [](std::size_t from, std::size_t to) -> std::size_t { return to == from ? 9 : 1; }},
};

std::int32_t cell(std::size_t from, std::size_t to, std::size_t row) {
  return static_cast<std::int32_t>(from * 10000 + to * 100 + row);
}

TEST(CommunicatorAlltoallv, PairsAboveTheThresholdGoPointToPointAndEitherSidePacks) {
  MpiCommunicator world(MPI_COMM_WORLD);
  const auto R = static_cast<std::size_t>(world.size());
  const auto me = static_cast<std::size_t>(world.rank());
  world.set_max_message_rows(2 * R);
  for (const Matrix& m : kMatrices)
    for (const bool blocking : {true, false}) {
      std::vector<std::size_t> send_counts(R), recv_counts(R);
      std::vector<std::int32_t> send, expected;
      for (std::size_t peer = 0; peer < R; ++peer) {
        send_counts[peer] = m.rows(me, peer);
        recv_counts[peer] = m.rows(peer, me);
        for (std::size_t row = 0; row < send_counts[peer]; ++row) send.push_back(cell(me, peer, row));
        for (std::size_t row = 0; row < recv_counts[peer]; ++row) expected.push_back(cell(peer, me, row));
      }
      std::vector<std::int32_t> recv(expected.size(), -1);
      const std::span<const std::size_t> sc(send_counts), rc(recv_counts);
      if (blocking) world.alltoallv(std::span<const std::int32_t>(send), sc, std::span<std::int32_t>(recv), rc);
      else world.ialltoallv(std::span<const std::int32_t>(send), sc, std::span<std::int32_t>(recv), rc).wait();
      EXPECT_EQ(recv, expected) << m.name << (blocking ? ", blocking" : ", non-blocking");
    }
}

}  // namespace
}  // namespace embscale::comm
