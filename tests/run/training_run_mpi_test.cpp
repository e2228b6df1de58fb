// run_training's run-wide traffic counters against the per-phase ones, for every scheme of the
// registry on the 1, 2 and 4 ranks this binary is launched on. The two are counted apart: a phase's
// bytes by the StepRecorder over its layer's communicators, the run-wide bytes by the training loop
// around the whole step. With one layer and no traffic outside its phases, each iteration's
// bytes_sent (bytes_recv) must equal the sum of its phases' <phase>.bytes_sent (bytes_recv), and
// the summary's bytes_sent_per_step their mean over iterations summed over ranks. table_row_wise
// talks mostly on the node and cross-node communicators it splits off the run's: a total counted
// on the run's communicator alone misses its reduce-scatter and all-gather inside the node.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "comm/mpi_communicator.hpp"
#include "config/config.hpp"
#include "embedding/scheme_registry.hpp"
#include "run/training_run.hpp"
#include "workloads/batch_source_factory.hpp"

namespace embscale::run {
namespace {

constexpr std::int64_t kIterations = 3;

// A small Zipf workload; the layer's type lines are the scheme's.
std::string config_text(const embedding::SchemeEntry& entry, int ranks) {
  const std::string sharded =
      std::string(entry.config_type) == "ShardedEmbedding" ? ", \"sharding\": \"" + std::string(entry.name) + "\"" : "";
  // table_row_wise: nodes of 2 ranks where the ranks allow (on 2 ranks one node, on 4 two).
  const std::string rpn =
      std::string(entry.name) == "table_row_wise" && ranks % 2 == 0 ? ", \"ranks_per_node\": 2" : "";
  return R"({"schema_version": 1,
    "solver": {"batchsize": 64, "max_iter": )" +
         std::to_string(kIterations) + R"(, "seed": 5},
    "optimizer": {"type": "SGD", "sgd_hparam": {"learning_rate": 0.05}},
    "layers": [
      {"name": "data", "type": "Data", "format": "Synthetic", "slot_size_array": [500, 300, 40],
       "synthetic": {"key_distribution": "zipf", "zipf_alpha": 1.05, "nnz_per_slot": 3},
       "label": {"top": "label"}, "sparse": [{"top": "data1", "slot_num": 3}]},
      {"name": "emb1", "type": ")" +
         std::string(entry.config_type) + "\"" + sharded + rpn + R"(,
       "bottom": "data1", "top": "emb1",
       "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 1000, "embedding_vec_size": 8,
                                   "combiner": "sum"}}]})";
}

// The run of config_text's workload under `entry`'s scheme on `world`.
TrainingRun run_scheme(comm::Communicator& world, const embedding::SchemeEntry& entry) {
  const config::Config config = config::parse_config_text(config_text(entry, world.size()), entry.name);
  const auto source = workloads::make_batch_source(config);
  return run_training(world, config, *source, nullptr);
}

TEST(TrainingRun, RunWideBytesAreTheSumOfThePhasesBytesForEveryScheme) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  for (const auto& entry : embedding::schemes()) {
    SCOPED_TRACE(entry.name);
    const TrainingRun run = run_scheme(world, entry);
    const auto& counters = run.measurements.counters;
    double sent_all_iterations = 0;
    for (const char* direction : {"bytes_sent", "bytes_recv"}) {
      const std::string suffix = std::string(".") + direction;
      for (std::int64_t i = 0; i < kIterations; ++i) {
        std::int64_t phases = 0;
        for (const auto& [name, values] : counters)
          if (name.ends_with(suffix)) phases += values[static_cast<std::size_t>(i)];
        EXPECT_EQ(counters.at(direction)[static_cast<std::size_t>(i)], phases) << direction << ", iteration " << i;
        if (suffix == ".bytes_sent") sent_all_iterations += static_cast<double>(phases);
      }
    }
    const double sent_per_step = world.allreduce(sent_all_iterations, comm::ReduceOp::kSum) / kIterations;
    EXPECT_DOUBLE_EQ(run.summary.bytes_sent_per_step, sent_per_step);
    if (std::string(entry.name) == "table_row_wise" && world.size() >= 2) {
      EXPECT_GT(counters.at("reduce_scatter_node.bytes_sent")[0], 0) << "the node's reduce-scatter moved nothing";
    }
  }
}

// unique_key_ratio is measured only where a scheme counts the distinct keys it requests
// (all2all_dense, data_parallel: they de-duplicate before the exchange); for the others it is
// not measured, NaN (printed n/a), never 0.
TEST(TrainingRun, TheUniqueKeyRatioIsNotMeasuredWhereNoSchemeCountsDistinctKeys) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  for (const auto& entry : embedding::schemes()) {
    SCOPED_TRACE(entry.name);
    const double ratio = run_scheme(world, entry).summary.unique_key_ratio;
    if (entry.dedups_before_exchange) {
      EXPECT_GT(ratio, 0.0);
      EXPECT_LE(ratio, 1.0);
    } else {
      EXPECT_TRUE(std::isnan(ratio)) << ratio;
    }
  }
}

}  // namespace
}  // namespace embscale::run
