// Every registered collective, through run_case as `embscale collectives` runs it: for every data
// type, every reduction op, both placements, sizes that are not multiples of the rank count, and
// every root, the data check finds no wrong element on 1, 2 and 4 ranks; the byte counters and
// nccl-tests' sizes are as the definitions say; and a collective that corrupts one element is
// caught, with where.
#include <gtest/gtest.h>
#include <mpi.h>

#include "collectives/bare_mpi.hpp"
#include "collectives/benchmark_run.hpp"
#include "collectives/collective_registry.hpp"
#include "comm/mpi_communicator.hpp"

namespace embscale::collectives {
namespace {

RunSettings quick_settings() {
  RunSettings s;
  s.iterations = 2;
  s.warmup = 1;
  s.rounds = 2;
  s.checks = 2;
  return s;
}

class CollectivesMpi : public testing::Test {
 protected:
  CollectivesMpi() : world(MPI_COMM_WORLD), bare(world) {}
  int ranks() const { return world.size(); }
  comm::MpiCommunicator world;
  BareCommunicator bare;
};

TEST_F(CollectivesMpi, EveryCollectiveTypeOpPlacementAndRootChecksClean) {
  for (const auto& entry : collectives()) {
    const auto bench = entry.make();
    const auto& traits = bench->traits();
    for (const auto& type : element_types()) {
      std::vector<comm::ReduceOp> ops{comm::ReduceOp::kSum};
      if (traits.reduces)
        ops = {comm::ReduceOp::kSum, comm::ReduceOp::kProd, comm::ReduceOp::kMax, comm::ReduceOp::kMin,
               comm::ReduceOp::kAvg};
      for (const auto op : ops)
        for (const int root : traits.rooted ? std::vector<int>{0, ranks() - 1} : std::vector<int>{0})
          // 3 * ranks + 1 elements: not a multiple of the rank count; and one element.
          for (const std::uint64_t elements : {std::uint64_t(3 * ranks() + 1), std::uint64_t{1}})
            for (const auto placement : {Placement::kOutOfPlace, Placement::kInPlace}) {
              if ((placement == Placement::kInPlace && !traits.in_place) ||
                  (placement == Placement::kOutOfPlace && !traits.out_of_place))
                continue;
              CaseSpec spec;
              spec.bench = bench.get();
              spec.type = type;
              spec.op = op;
              spec.root = root;
              spec.placement = placement;
              spec.requested_bytes = elements * type.bytes;
              const CaseResult r = run_case(world, bare.get(), spec, quick_settings());
              EXPECT_EQ(r.wrong, 0u) << entry.name << " " << type.name << " op " << static_cast<int>(op) << " root "
                                     << root << " " << placement_name(placement) << " " << elements << " elements: "
                                     << (r.wrong_examples.empty() ? "(on another rank)" : r.wrong_examples.front());
              EXPECT_EQ(r.times.size(), 4u);
              EXPECT_EQ(r.time_series.size(), 4u);
              // MPI has no half, bfloat16 or average.
              const bool bare_has_it =
                  bare_datatype(type.type) != MPI_DATATYPE_NULL && (!traits.reduces || op != comm::ReduceOp::kAvg);
              EXPECT_EQ(r.measured_bare, bare_has_it);
            }
    }
  }
}

TEST_F(CollectivesMpi, SizesAndBytesFollowNcclTestsDefinitions) {
  const auto n = static_cast<std::size_t>(ranks());
  const std::size_t elements = 10 * n + n / 2;  // not a multiple of the rank count (from 2 ranks on)
  const auto run = [&](const char* name) {
    const auto bench = find_collective(name, "test").make();
    CaseSpec spec;
    spec.bench = bench.get();
    spec.type = element_types()[7];  // float
    spec.requested_bytes = elements * 4;
    spec.placement = bench->traits().out_of_place ? Placement::kOutOfPlace : Placement::kInPlace;
    return run_case(world, bare.get(), spec, quick_settings());
  };
  const auto others = static_cast<std::int64_t>(n - 1);
  {
    const auto r = run("allreduce");
    EXPECT_EQ(r.layout.count, elements);
    EXPECT_EQ(r.layout.size_bytes, static_cast<double>(elements) * 4.0);
    EXPECT_DOUBLE_EQ(r.busbw_GBps, r.algbw_GBps * 2.0 * static_cast<double>(n - 1) / static_cast<double>(n));
  }
  {
    const auto r = run("allgather");
    EXPECT_EQ(r.layout.count, 10u);  // per rank, rounded down
    EXPECT_EQ(r.layout.size_bytes, 10.0 * static_cast<double>(n) * 4);
    EXPECT_EQ(r.bytes_recv.front(), 10 * 4 * others);
  }
  {
    const auto r = run("alltoall");
    EXPECT_EQ(r.layout.count, 10u);  // per peer
    EXPECT_EQ(r.bytes_sent.front(), 10 * 4 * others);
    EXPECT_EQ(r.bytes_recv.front(), 10 * 4 * others);
    EXPECT_DOUBLE_EQ(r.send_bytes_max, r.send_bytes_mean);
  }
  {
    const auto r = run("alltoallv");
    EXPECT_EQ(r.layout.count, 10u);
    EXPECT_EQ(r.bytes_sent.front(), 10 * 4 * others);
  }
  {
    const auto r = run("sendrecv");
    EXPECT_DOUBLE_EQ(r.busbw_GBps, r.algbw_GBps);
    EXPECT_EQ(r.bytes_sent.front(), ranks() > 1 ? static_cast<std::int64_t>(elements * 4) : 0);
  }
}

// allreduce that flips one element of the last rank's result: the check must see it.
class CorruptingAllreduce final : public CollectiveBench {
 public:
  CorruptingAllreduce() : inner_(make_allreduce()) {}
  const CollectiveTraits& traits() const override { return inner_->traits(); }
  Layout layout(std::size_t count, std::size_t bytes, int rank, int ranks) const override {
    return inner_->layout(count, bytes, rank, ranks);
  }
  std::size_t input_elements(const Layout& l, std::size_t call, int rank, int root) const override {
    return inner_->input_elements(l, call, rank, root);
  }
  ExpectedElement expected(const Layout& l, std::size_t call, std::size_t i, int rank, int ranks,
                           int root) const override {
    return inner_->expected(l, call, i, rank, ranks, root);
  }
  void run(Side side, const CallArgs& args, std::size_t first, std::span<double> times) const override {
    inner_->run(side, args, first, times);
    if (args.comm->rank() == args.comm->size() - 1) static_cast<float*>(args.recv)[5] += 1.0f;
  }
  void enqueue_bare_nccl(const CallArgs& args, std::size_t call) const override {
    inner_->enqueue_bare_nccl(args, call);
  }

 private:
  std::unique_ptr<CollectiveBench> inner_;
};

TEST_F(CollectivesMpi, ACorruptedElementIsCountedAndLocated) {
  CorruptingAllreduce bench;
  CaseSpec spec;
  spec.bench = &bench;
  spec.type = element_types()[7];  // float
  spec.requested_bytes = 16 * 4;
  const CaseResult r = run_case(world, bare.get(), spec, quick_settings());
  EXPECT_EQ(r.wrong, 2u);  // one per checked call, over all ranks
  if (world.rank() == ranks() - 1) {
    ASSERT_EQ(r.wrong_examples.size(), 2u);
    EXPECT_EQ(r.wrong_examples[0].rfind("element 5: got ", 0), 0u) << r.wrong_examples[0];
  } else {
    EXPECT_TRUE(r.wrong_examples.empty());
  }
}

}  // namespace
}  // namespace embscale::collectives
