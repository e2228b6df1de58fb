// capture_scheme_steps on the 1, 2 and 4 ranks this binary is launched on: the calls of a step in
// the order the scheme's documentation gives them (lib/embedding/README.md), counts that agree
// between the calls of one exchange, one SchemeStep per iteration, and the splits a scheme makes.
#include <gtest/gtest.h>

#include <vector>

#include "collectives/step_capture.hpp"
#include "comm/mpi_communicator.hpp"
#include "core/error.hpp"
#include "embedding/scheme_registry.hpp"

namespace embscale::collectives {
namespace {

const embedding::SchemeEntry& entry(const std::string& name) {
  for (const auto& e : embedding::schemes())
    if (name == e.name) return e;
  throw Error("no scheme " + name);
}

config::Config small_scheme_config(const std::string& scheme, int ranks) {
  config::Config cfg = scheme_config(entry(scheme), ranks);
  cfg.solver.batchsize = 256;
  cfg.solver.batchsize_per_rank = 0;
  return cfg;
}

// all2all_dense: alltoall of counts, alltoallv of keys, alltoallv of rows back, alltoallv of
// gradients: the rows go back by the keys' counts reversed, the gradients forward again.
TEST(StepCapture, All2AllDenseStepIsCountsKeysRowsGradients) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const config::Config cfg = small_scheme_config("all2all_dense", world.size());
  const auto steps = capture_scheme_steps(world, cfg, 0, 2);
  ASSERT_EQ(steps.size(), 2u);
  const std::size_t dim = static_cast<std::size_t>(cfg.embeddings.front().embedding_vec_size);
  for (const SchemeStep& step : steps) {
    EXPECT_TRUE(step.splits.empty());
    ASSERT_EQ(step.calls.size(), 4u);
    const std::vector<CollectiveOp> ops = {CollectiveOp::kAlltoall, CollectiveOp::kAlltoallv, CollectiveOp::kAlltoallv,
                                           CollectiveOp::kAlltoallv};
    for (std::size_t k = 0; k < ops.size(); ++k) {
      EXPECT_EQ(step.calls[k].op, ops[k]) << "call " << k;
      EXPECT_EQ(step.calls[k].comm, 0);
      EXPECT_EQ(step.calls[k].ranks, world.size());
    }
    const CollectiveCall &keys = step.calls[1], &rows = step.calls[2], &grads = step.calls[3];
    EXPECT_EQ(keys.type.row_bytes, sizeof(Key));
    EXPECT_EQ(rows.send_counts, keys.recv_counts);
    EXPECT_EQ(rows.recv_counts, keys.send_counts);
    EXPECT_EQ(rows.type.row_bytes, dim * sizeof(float));
    EXPECT_EQ(grads.send_counts, keys.send_counts);
    EXPECT_EQ(grads.recv_counts, keys.recv_counts);
  }
}

// table_row_wise splits the layer's communicator into nodes and across them, once, when the
// engine is built: every step lists both splits; its in-node reduce-scatter runs on the first.
TEST(StepCapture, TableRowWiseRecordsItsTwoSplits) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const int ranks = world.size(), rank = world.rank();
  const config::Config cfg = small_scheme_config("table_row_wise", ranks);
  const int rpn = cfg.embeddings.front().ranks_per_node;
  const auto steps = capture_scheme_steps(world, cfg, 0, 2);
  for (const SchemeStep& step : steps) {
    ASSERT_EQ(step.splits.size(), 2u);
    EXPECT_EQ(step.splits[0].parent, 0);
    EXPECT_EQ(step.splits[0].color, rank / rpn);  // the node
    EXPECT_EQ(step.splits[1].color, rank % rpn);  // the ranks of one local index, across nodes
    bool node_reduce_scatter = false;
    for (const auto& call : step.calls)
      node_reduce_scatter |= call.op == CollectiveOp::kReduceScatter && call.comm == 1 && call.ranks == rpn;
    EXPECT_TRUE(node_reduce_scatter);
  }
}

}  // namespace
}  // namespace embscale::collectives
