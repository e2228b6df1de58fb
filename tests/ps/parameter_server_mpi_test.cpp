// The parameter server (lib/ps) against the single-process reference (tests/embedding/
// reference_model.hpp), over both message transports (MPI and UCX), on the role splits this
// binary's world allows: 1 trainer + 1 server on 2
// ranks; 2 + 2 and 3 + 1 on 4. Trainers are the first ranks, servers the rest. Synchronous mode
// must train exactly the reference's rows (every server checks each row it holds, and that it
// holds exactly the ids that hash to it); trainers check the pooled vectors of the last step.
// Asynchronous mode must never serve a pull staler than its bound (instrumented on the servers).
// Shards saved by the servers after training load into any number of servers unchanged. The dense
// parameters' slices come with every pull and are updated by the pushes' dense gradients (the
// synchronous sum written out here); an evaluation's reads see the last step applied and change
// nothing.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>
#include <thread>

#include "comm/mpi_communicator.hpp"
#include "core/batch_source.hpp"
#include "embedding/engine_test_support.hpp"
#include "embedding/kv_row_store.hpp"
#include "embedding/reference_model.hpp"
#include "kv/table_options.hpp"
#include "ps/parameter_server.hpp"
#include "ps/ps_trainer.hpp"
#include "ps/shard_files.hpp"
#include "ps_test_support.hpp"
#include "workloads/synthetic.hpp"

namespace embscale::ps {
namespace {

using embedding::testing::kTolerance;
using embedding::testing::RelativeError;

using namespace testing;  // ps_test_support.hpp

config::Config ps_config(const config::Optimizer& optimizer, config::Combiner combiner) {
  return ps_test_config(optimizer, combiner, /*dynamic=*/true);
}

// A server's shard: the KV table with the layer's options, far above the keys (nothing evicted).
std::unique_ptr<embedding::KvRowStore> shard_for(const config::EmbeddingLayer& layer,
                                                 const embedding::SparseOptimizer& optimizer) {
  kv::TableOptions options = layer.storage.table;
  options.dim = layer.embedding_vec_size;
  options.training = true;
  options.optimizer_state_width = optimizer.state_width();
  options.seed = kTableSeed;
  options.num_embeddings = kVocabulary;  // the reference's vocabulary
  options.max_capacity = 4096;
  options.bucket_capacity = 128;
  options.initializer.initial_state.assign(static_cast<std::size_t>(optimizer.state_width()), 0.0f);
  optimizer.init_state(options.initializer.initial_state);
  return std::make_unique<embedding::KvRowStore>(options, "ps");
}

// The ids a server's shard holds, and how far their rows are from the reference's.
struct ShardContents {
  std::set<Key> held;
  RelativeError rows;
};
ShardContents contents_of(const embedding::RowStore& shard, embedding::testing::ReferenceModel& reference,
                          std::size_t dim) {
  ShardContents out;
  shard.for_each_row([&](Key key, std::span<const float> values) {
    out.held.insert(key);
    const auto want = reference.values(key, 0, dim);
    for (std::size_t d = 0; d < dim; ++d) out.rows.add(values[d], want[d]);
  });
  return out;
}

// The ids of `seen` that server `index` of `servers` owns.
std::set<Key> owned_by(const std::set<Key>& seen, int index, int servers) {
  std::set<Key> mine;
  for (const Key key : seen)
    if (server_of(key, servers) == index) mine.insert(key);
  return mine;
}

struct Outcome {
  ServeStats stats;  // on servers
};

// Runs `cfg` with `roles` and checks it; `slow_trainer_ms`: trainer 0 sleeps this long per step.
Outcome run_and_check(comm::ChannelTransport transport, const config::Config& cfg, Roles roles, bool synchronous,
                      std::int64_t staleness, int slow_trainer_ms = 0, const std::filesystem::path& save_to = {}) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const auto channel = comm::open_message_channel(world, transport);
  const int rank = world.rank();
  const auto& layer = cfg.embeddings.front();
  const auto dim = static_cast<std::size_t>(layer.embedding_vec_size);
  const bool mean = layer.combiner == config::Combiner::kMean;
  std::vector<int> trainers, servers;
  for (int r = 0; r < roles.trainers + roles.servers; ++r) (r < roles.trainers ? trainers : servers).push_back(r);
  const workloads::SyntheticGenerator gen(cfg.data, cfg.solver.seed, cfg.solver.batchsize);
  embedding::testing::ReferenceModel reference(layer, kTableSeed, kSlotSizes, kSlotOffsets, kBatch,
                                               {layer.embedding_vec_size});
  std::vector<std::vector<float>> expected_pooled;
  std::set<Key> seen;
  for (std::int64_t it = 0; it < kSteps; ++it) {
    const Batch global = gen.generate_range(it, {0, kBatch});
    seen.insert(global.keys.begin(), global.keys.end());
    expected_pooled.push_back(reference.step(global));
  }
  const std::string what = std::to_string(roles.trainers) + " trainers + " + std::to_string(roles.servers) +
                           " servers, " + (synchronous ? "synchronous" : "asynchronous") + " over " +
                           comm::to_string(transport) + ", rank " + std::to_string(rank);

  Outcome outcome;
  if (rank < roles.trainers) {
    PsClient client(*channel, servers, layer.embedding_vec_size);
    PsTrainer trainer(client, layer.embedding_vec_size, mean, kBatch);
    embedding::StepRecorder recorder;
    for (std::int64_t it = 0; it < kSteps; ++it) {
      if (rank == 0 && slow_trainer_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(slow_trainer_ms));
      recorder.begin_step();
      trainer.step(it + 1, gen.generate(it, rank, roles.trainers), recorder);
      recorder.end_step();
    }
    client.finish(kSteps);
    if (synchronous) {  // the last step's pooled vectors: the rows before its update, as the reference's
      const auto share = sample_share_of(kBatch, rank, roles.trainers);
      const RelativeError pooled =
          embedding::testing::pooled_error(trainer.pooled(), expected_pooled.back(), share, kSlotSizes.size() * dim);
      EXPECT_LT(pooled.relative(), kTolerance) << what << ": pooled vectors of the last step";
    }
  } else {
    const int index = rank - roles.trainers;
    const auto optimizer = embedding::make_sparse_optimizer(layer.optimizer, layer.embedding_vec_size);
    const auto shard = shard_for(layer, *optimizer);
    ParameterServer server(*channel, {trainers, synchronous, staleness, {}, {}}, *shard, *optimizer);
    outcome.stats = server.serve();
    EXPECT_EQ(outcome.stats.pushes, roles.trainers * kSteps) << what;
    EXPECT_EQ(outcome.stats.pulls, roles.trainers * kSteps) << what;
    EXPECT_LE(outcome.stats.max_staleness, synchronous ? 0 : staleness) << what;
    // Exactly the ids that hash here, each pulled at least once.
    const ShardContents contents = contents_of(*shard, reference, dim);
    EXPECT_EQ(contents.held, owned_by(seen, index, roles.servers)) << what;
    if (!save_to.empty()) save_shard(shard->table(), save_to, index, roles.servers);
    if (synchronous) {
      EXPECT_LT(contents.rows.relative(), kTolerance) << what << ": rows held";
    }
  }
  world.barrier();
  return outcome;
}

// The rows `cfg`'s reference trains, checked on `servers` servers loading the shards in `dir`:
// ranks 0 .. servers-1 each load their part into a fresh shard and must hold exactly the ids that
// hash to them now, with the reference's rows.
void expect_loaded_rows(const config::Config& cfg, const std::filesystem::path& dir, int servers) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const auto& layer = cfg.embeddings.front();
  const auto dim = static_cast<std::size_t>(layer.embedding_vec_size);
  if (world.rank() < servers) {
    const workloads::SyntheticGenerator gen(cfg.data, cfg.solver.seed, cfg.solver.batchsize);
    embedding::testing::ReferenceModel reference(layer, kTableSeed, kSlotSizes, kSlotOffsets, kBatch,
                                                 {layer.embedding_vec_size});
    std::set<Key> seen;
    for (std::int64_t it = 0; it < kSteps; ++it) {
      const Batch global = gen.generate_range(it, {0, kBatch});
      seen.insert(global.keys.begin(), global.keys.end());
      reference.step(global);
    }
    const auto optimizer = embedding::make_sparse_optimizer(layer.optimizer, layer.embedding_vec_size);
    const auto shard = shard_for(layer, *optimizer);
    load_shard(shard->table(), dir, world.rank(), servers);
    const ShardContents contents = contents_of(*shard, reference, dim);
    const std::string what = "loaded by " + std::to_string(servers) + " servers, rank " + std::to_string(world.rank());
    EXPECT_EQ(contents.held, owned_by(seen, world.rank(), servers)) << what;
    EXPECT_LT(contents.rows.relative(), kTolerance) << what << ": rows";
  }
  world.barrier();
}

config::Optimizer optimizer_of(config::OptimizerType type) {
  config::Optimizer o;
  o.type = type;
  o.learning_rate = 0.3;  // large: the rows move visibly in a few steps
  return o;
}

TEST(ParameterServer, SynchronousTrainingEqualsTheSingleProcessReference) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  if (role_splits(world.size()).empty()) GTEST_SKIP() << "runs on 2 ranks (1 + 1) and 4 (2 + 2, 3 + 1)";
  for (const auto transport : kTransports)
    for (const auto type : {config::OptimizerType::kSGD, config::OptimizerType::kAdaGrad, config::OptimizerType::kAdam})
      for (const auto combiner : {config::Combiner::kSum, config::Combiner::kMean})
        for (const Roles roles : role_splits(world.size()))
          run_and_check(transport, ps_config(optimizer_of(type), combiner), roles, /*synchronous=*/true, 0);
}

// Trained on S servers, saved there (each server its shard), loaded by 1 .. world ranks as
// servers: the rows are the reference's, each on the server that owns it now.
TEST(ParameterServer, ShardsSavedAfterTrainingLoadIntoAnyServerCountUnchanged) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  if (role_splits(world.size()).empty()) GTEST_SKIP() << "runs on 2 ranks (1 + 1) and 4 (2 + 2, 3 + 1)";
  // One directory for all ranks (one host): rank 0's name, broadcast.
  const std::string base = comm::broadcast_strings(
      world,
      {(std::filesystem::temp_directory_path() / ("embscale_ps_save_" + std::to_string(::getpid()))).string()})[0];
  const config::Config cfg = ps_config(optimizer_of(config::OptimizerType::kAdam), config::Combiner::kMean);
  int split = 0;
  for (const Roles roles : role_splits(world.size())) {
    const std::filesystem::path dir = base + "_" + std::to_string(split);
    run_and_check(kTransports[split++ % 2], cfg, roles, /*synchronous=*/true, 0, 0, dir);
    for (int servers = 1; servers <= world.size(); ++servers) expect_loaded_rows(cfg, dir, servers);
    if (world.rank() == 0) std::filesystem::remove_all(dir);
  }
}

// Trainer 0 sleeps each step, so the others run ahead until the bound holds them: some pulls
// wait (more than one trainer), none is served staler than the bound, and with a bound above 0
// some are served stale.
TEST(ParameterServer, AsynchronousPullsAreNeverStalerThanTheBound) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  if (role_splits(world.size()).empty()) GTEST_SKIP() << "runs on 2 ranks (1 + 1) and 4 (2 + 2, 3 + 1)";
  for (const std::int64_t bound : {0, 2})
    for (const Roles roles : role_splits(world.size())) {
      const auto transport = kTransports[bound == 0 ? 0 : 1];
      const Outcome outcome =
          run_and_check(transport, ps_config(optimizer_of(config::OptimizerType::kSGD), config::Combiner::kSum), roles,
                        /*synchronous=*/false, bound, /*slow_trainer_ms=*/60);
      // The bound itself is checked in run_and_check (max_staleness <= bound). Here: the slow
      // trainer made the others wait, and with room to run ahead they did (the instrument sees
      // stale reads); how far they got depends on scheduling, so only "some" is asserted.
      if (world.rank() >= roles.trainers && roles.trainers > 1) {
        EXPECT_GT(outcome.stats.deferred_pulls, 0) << "bound " << bound << ": no pull waited for the slow trainer";
        if (bound > 0) {
          EXPECT_GE(outcome.stats.max_staleness, 1) << "the fast trainers never read ahead";
        }
      }
    }
}

// The dense parameters on the servers, synchronous: P values split into one slice per server,
// plain SGD (w -= lr g) as the servers' dense update. Trainer t pushes g(t, s, k) = (t + 1) (k + 1)
// s / 100 at step s, so the pull of step s must receive w0[k] - lr sum_{u < s} sum_t g(t, u, k).
// After step 3 an evaluation reads a batch's rows and every dense value: the dense values are
// those after step 3, the rows those the next pull reads, an id never trained reads the eval
// initializer (zeros) and is not inserted, and (one trainer: nothing else runs meanwhile) the
// shard's size and counters do not change.
TEST(ParameterServer, DenseSlicesTravelWithPullsAndEvaluationReadsChangeNothing) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  if (role_splits(world.size()).empty()) GTEST_SKIP() << "runs on 2 ranks (1 + 1) and 4 (2 + 2, 3 + 1)";
  constexpr std::size_t kDense = 11;
  constexpr float kLr = 0.5f;
  constexpr std::int64_t kEvaluatedAfter = 3;
  const Key kNeverTrained = 100000;
  const auto initial = [](std::size_t k) { return 0.1f * static_cast<float>(k); };
  const auto grad = [](int trainer, std::int64_t step, std::size_t k) {
    return static_cast<float>((trainer + 1) * static_cast<int>(k + 1) * step) / 100.0f;
  };
  const config::Config cfg = ps_config(optimizer_of(config::OptimizerType::kSGD), config::Combiner::kSum);
  const auto& layer = cfg.embeddings.front();
  for (const auto transport : kTransports)
    for (const Roles roles : role_splits(world.size())) {
      const auto channel = comm::open_message_channel(world, transport);
      const int rank = world.rank();
      std::vector<int> trainers, servers;
      for (int r = 0; r < roles.trainers + roles.servers; ++r) (r < roles.trainers ? trainers : servers).push_back(r);
      const std::string what =
          std::to_string(roles.trainers) + " + " + std::to_string(roles.servers) + ", rank " + std::to_string(rank);
      // The values a pull of `step` must receive.
      const auto expected = [&](std::int64_t step, std::size_t k) {
        float w = initial(k);
        for (std::int64_t u = 1; u < step; ++u) {
          float sum = 0.0f;
          for (int t = 0; t < roles.trainers; ++t) sum += grad(t, u, k);
          w -= kLr * sum;
        }
        return w;
      };
      const workloads::SyntheticGenerator gen(cfg.data, cfg.solver.seed, cfg.solver.batchsize);
      if (rank < roles.trainers) {
        PsClient client(*channel, servers, layer.embedding_vec_size, kDense);
        std::vector<float> dense(kDense), dense_grads(kDense);
        PsTrainer trainer(client, layer.embedding_vec_size, false, kBatch, {}, {dense, dense_grads});
        embedding::StepRecorder recorder;
        for (std::int64_t step = 1; step <= kSteps; ++step) {
          for (std::size_t k = 0; k < kDense; ++k) dense_grads[k] = grad(rank, step, k);
          recorder.begin_step();
          trainer.step(step, gen.generate(step - 1, rank, roles.trainers), recorder);
          recorder.end_step();
          for (std::size_t k = 0; k < kDense; ++k)
            EXPECT_NEAR(dense[k], expected(step, k), 1e-4f)
                << what << ": dense value " << k << " pulled at step " << step;
          if (step != kEvaluatedAfter) continue;
          // The evaluation: this trainer's next batch with an id never trained added, read as the
          // next step's pull would.
          Batch batch = gen.generate(step, rank, roles.trainers);
          batch.keys.back() = kNeverTrained;
          std::fill(dense.begin(), dense.end(), -1.0f);
          const std::span<const float> pooled = trainer.evaluation_pooled(step + 1, batch);
          for (std::size_t k = 0; k < kDense; ++k)
            EXPECT_NEAR(dense[k], expected(step + 1, k), 1e-4f) << what << ": dense value " << k << " read";
          EXPECT_TRUE(std::all_of(pooled.begin(), pooled.end(), [](float v) { return std::isfinite(v); })) << what;
          client.end_reads(step);
        }
        client.finish(kSteps);
      } else {
        const int index = rank - roles.trainers;
        const auto optimizer = embedding::make_sparse_optimizer(layer.optimizer, layer.embedding_vec_size);
        const auto shard = shard_for(layer, *optimizer);
        const DenseSlice slice = dense_slice(kDense, roles.servers, index);
        ServerOptions options{trainers, true, 0, std::vector<float>(slice.count), {}};
        for (std::size_t k = 0; k < slice.count; ++k) options.dense_values[k] = initial(slice.first + k);
        options.dense_update = [](std::span<float> values, std::span<const float> grads, std::int64_t) {
          for (std::size_t k = 0; k < values.size(); ++k) values[k] -= kLr * grads[k];
        };
        ParameterServer server(*channel, std::move(options), *shard, *optimizer);
        for (std::int64_t step = 1; step <= kSteps; ++step) {
          (void)server.serve_through(step);
          if (step != kEvaluatedAfter) continue;
          const auto counters_before = server.take_counters();
          const std::int64_t size_before = shard->size();
          (void)server.serve_evaluation(step);
          EXPECT_GT(counters_before.hits + counters_before.misses, 0) << what << ": the training was not counted";
          if (roles.trainers == 1) {  // with more, a trainer done reading may pull its next step meanwhile
            EXPECT_EQ(shard->size(), size_before) << what << ": the evaluation inserted rows";
            const auto counters = server.take_counters();
            EXPECT_EQ(counters.hits + counters.misses + counters.inserts, 0) << what << ": the evaluation was counted";
          }
          bool found = false;
          shard->for_each_row([&](Key key, std::span<const float>) { found = found || key == kNeverTrained; });
          EXPECT_FALSE(found) << what << ": the evaluation's unseen id was inserted";
        }
        (void)server.serve();
      }
      world.barrier();
    }
}

}  // namespace
}  // namespace embscale::ps
