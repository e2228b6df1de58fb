// The eviction study inside run_training, on the 1, 2 and 4 ranks this binary is launched on:
//   - a table of one bucket IS the unbucketed oracle (bucket-local eviction over one bucket is
//     global), so under every deterministic score strategy its hit rate equals unbucketed's at
//     every iteration; under STEP (LRU-like, nothing to forget) it also holds exactly what the
//     ideal score retention holds: retention recall 1 at every sample;
//   - the study's table hits are the engine's own `hits` counters, summed over ranks;
//   - Belady's optimum hits at least as often as the table and every online oracle over the
//     whole stream (the warm-up included: it is optimal for the stream it saw).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "comm/mpi_communicator.hpp"
#include "config/config.hpp"
#include "run/training_run.hpp"
#include "workloads/batch_source_factory.hpp"

namespace embscale::sim {
namespace {

constexpr int kWarmup = 4;
constexpr int kIterations = 12;

std::string config_text(const std::string& strategy, int capacity, int bucket, const std::string& admission,
                        const std::string& tiers = "") {
  return R"({"schema_version": 1,
    "solver": {"batchsize": 64, "max_iter": )" +
         std::to_string(kIterations) + R"(, "warmup_iter": )" + std::to_string(kWarmup) + R"(, "seed": 7},
    "optimizer": {"type": "SGD", "sgd_hparam": {"learning_rate": 0.05}},
    "layers": [
      {"name": "data", "type": "Data", "format": "Synthetic", "slot_size_array": [3000, 400],
       "synthetic": {"key_distribution": "zipf", "zipf_alpha": 0.9, "nnz_per_slot": 3},
       "label": {"top": "label"}, "sparse": [{"top": "data1", "slot_num": 2}]},
      {"name": "emb1", "type": "All2AllDenseEmbedding", "bottom": "data1", "top": "emb1",
       "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 4000, "embedding_vec_size": 4, "combiner": "sum"},
       "storage": {"type": "dynamic", "max_capacity": )" +
         std::to_string(capacity) + R"(, "bucket_capacity": )" + std::to_string(bucket) + R"(, "score_strategy": ")" +
         strategy + R"(", "admission": {"strategy": ")" + admission + R"("})" + tiers + R"(}}],
    "eviction": {"sample_every": 3}})";
}

run::TrainingRun run(comm::Communicator& world, const std::string& text) {
  const config::Config config = config::parse_config_text(text, "test");
  const auto source = workloads::make_batch_source(config);
  return run::run_training(world, config, *source, nullptr);
}

const ResultTable& table(const EvictionResults& results, const std::string& name) {
  for (const auto& t : results.tables)
    if (t.name == name) return t;
  throw std::logic_error("no table " + name);
}

std::size_t column(const ResultTable& t, const std::string& name) {
  for (std::size_t c = 0; c < t.columns.size(); ++c)
    if (t.columns[c] == name) return c;
  throw std::logic_error("no column " + name + " in " + t.name);
}

double at(const ResultTable& t, std::size_t row, const std::string& name) {
  return t.values[row * t.columns.size() + column(t, name)];
}

std::size_t rows(const ResultTable& t) { return t.values.size() / t.columns.size(); }

TEST(EvictionStudy, OneBucketTableIsTheIdealScoreRetention) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  for (const std::string strategy : {"STEP", "LFU", "EPOCH_LFU", "CUSTOMIZED"}) {
    SCOPED_TRACE(strategy);
    const auto results = run(world, config_text(strategy, 64, 64, "none")).eviction;
    const auto& hit_rate = table(results, "hit_rate");
    const auto& churn = table(results, "churn");
    ASSERT_EQ(rows(hit_rate), static_cast<std::size_t>(kWarmup + kIterations));
    double hits = 0, evictions = 0;
    for (std::size_t r = 0; r < rows(hit_rate); ++r) {
      EXPECT_EQ(at(hit_rate, r, "iteration"), static_cast<double>(r) - kWarmup);
      EXPECT_EQ(at(hit_rate, r, "table"), at(hit_rate, r, "unbucketed")) << "row " << r;
      hits += at(churn, r, "hits");
      evictions += at(churn, r, "evictions");
    }
    EXPECT_GT(hits, 0);  // the case is not trivial: the table hits and evicts
    if (strategy != "LFU" && strategy != "EPOCH_LFU") {
      EXPECT_GT(evictions, 0);
    }
    const auto& recall = table(results, "recall");
    ASSERT_GT(rows(recall), 0u);
    if (strategy == "STEP") {
      for (std::size_t r = 0; r < rows(recall); ++r) EXPECT_EQ(at(recall, r, "retention_recall"), 1.0) << "row " << r;
    }
  }
}

TEST(EvictionStudy, TableHitsAreTheEngineCountersAndBeladyBoundsEveryPolicy) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  for (const std::string admission : {"none", "tiny_lfu"}) {
    SCOPED_TRACE(admission);
    const auto run_result = run(world, config_text("LFU", 256, 16, admission));
    const auto& churn = table(run_result.eviction, "churn");
    const auto& hits = run_result.measurements.counters.at("hits");
    for (int i = 0; i < kIterations; ++i) {
      const std::int64_t engine_hits = world.allreduce(hits[static_cast<std::size_t>(i)], comm::ReduceOp::kSum);
      EXPECT_EQ(at(churn, static_cast<std::size_t>(kWarmup + i), "hits"), static_cast<double>(engine_hits)) << i;
    }
    const auto& hit_rate = table(run_result.eviction, "hit_rate");
    double accesses = 0;
    std::map<std::string, double> total;
    for (std::size_t r = 0; r < rows(hit_rate); ++r) {
      const double n = at(churn, r, "accesses");
      accesses += n;
      for (const std::string policy : {"table", "lru", "lfu", "score_retention", "unbucketed", "belady"})
        total[policy] += static_cast<double>(std::llround(at(hit_rate, r, policy) * n));
    }
    ASSERT_GT(accesses, 0);
    for (const std::string policy : {"table", "lru", "lfu", "score_retention", "unbucketed"})
      EXPECT_GE(total["belady"], total[policy]) << policy;
    EXPECT_LT(total["table"], accesses);  // the tables are small enough to miss
  }
}

// Caching mode measures its fast tier (128 rows of 16 bytes: 8 buckets of 16): a key found in the
// slow tier and promoted is a miss of the fast tier, so the study's hits are at most the engine's
// (which count both tiers) and its accesses are exactly the engine's hits + misses.
TEST(EvictionStudy, CachingModeMeasuresTheFastTier) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const auto run_result =
      run(world, config_text("LFU", 4096, 16, "none", R"(, "caching": true, "global_hbm_for_values": 2048)"));
  const auto& churn = table(run_result.eviction, "churn");
  const auto& counters = run_result.measurements.counters;
  double fast_hits = 0, all_hits = 0;
  for (int i = 0; i < kIterations; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const std::int64_t hits = world.allreduce(counters.at("hits")[u], comm::ReduceOp::kSum);
    const std::int64_t misses = world.allreduce(counters.at("misses")[u], comm::ReduceOp::kSum);
    const auto row = static_cast<std::size_t>(kWarmup + i);
    EXPECT_EQ(at(churn, row, "accesses"), static_cast<double>(hits + misses)) << i;
    EXPECT_LE(at(churn, row, "hits"), static_cast<double>(hits)) << i;
    fast_hits += at(churn, row, "hits");
    all_hits += static_cast<double>(hits);
  }
  EXPECT_GT(fast_hits, 0);
  EXPECT_LT(fast_hits, all_hits);  // the slow tier served some reads the fast tier missed
}

}  // namespace
}  // namespace embscale::sim
