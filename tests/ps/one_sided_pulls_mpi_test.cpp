// The parameter server on static storage (strided placement), its pulls as messages or read
// one-sidedly (lib/ps/one_sided_pulls: from the servers' memory mapped here, or through the
// transport's RMA gets), over both transports, against the single-process
// reference (tests/embedding/reference_model.hpp) on 1 + 1, 2 + 2 and 3 + 1 ranks: synchronous
// training trains exactly the reference's rows (each server holds exactly the ids id % servers,
// every row checked), one-sided pulls send no pull to a server, the dense slices read one-sidedly
// are the SGD sum written out, and asynchronous one-sided reads are never staler than the bound
// (the trainers' own count, as no server sees a read).
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>

#include "comm/mpi_communicator.hpp"
#include "embedding/engine_test_support.hpp"
#include "embedding/reference_model.hpp"
#include "embedding/static_row_store.hpp"
#include "kv/table_options.hpp"
#include "ps/parameter_server.hpp"
#include "ps/ps_trainer.hpp"
#include "ps_test_support.hpp"
#include "workloads/synthetic.hpp"

namespace embscale::ps {
namespace {

using embedding::testing::kTolerance;
using embedding::testing::RelativeError;

using namespace testing;  // ps_test_support.hpp

constexpr std::size_t kDense = 7;
constexpr float kDenseLr = 0.5f;

config::Config static_config(config::OptimizerType type) {
  config::Optimizer optimizer;
  optimizer.type = type;
  optimizer.learning_rate = 0.3;
  return ps_test_config(optimizer, config::Combiner::kSum, /*dynamic=*/false);
}

// Server `index` of `servers`: a static store of the ids id % servers == index, in `memory` when
// set (one-sided pulls: the rows window).
std::unique_ptr<embedding::StaticRowStore> static_shard(const config::EmbeddingLayer& layer,
                                                        const embedding::SparseOptimizer& optimizer, int index,
                                                        int servers, const embedding::RowMemory& memory) {
  kv::TableOptions options = layer.storage.table;
  options.dim = layer.embedding_vec_size;
  options.training = true;
  options.optimizer_state_width = optimizer.state_width();
  options.seed = kTableSeed;
  options.num_embeddings = kVocabulary;
  options.initializer.initial_state.assign(static_cast<std::size_t>(optimizer.state_width()), 0.0f);
  optimizer.init_state(options.initializer.initial_state);
  embedding::OwnedKeys owned;
  owned.add(index, kVocabulary, servers);
  return std::make_unique<embedding::StaticRowStore>(std::move(owned), options, 0, 0, ExecutionContext{}, memory);
}

float dense_initial(std::size_t k) { return 0.1f * static_cast<float>(k); }
float dense_grad(int trainer, std::int64_t step, std::size_t k) {
  return static_cast<float>((trainer + 1) * static_cast<int>(k + 1) * step) / 100.0f;
}
// Synchronous SGD on the dense values: what a pull of `step` reads.
float dense_expected(int trainers, std::int64_t step, std::size_t k) {
  float w = dense_initial(k);
  for (std::int64_t u = 1; u < step; ++u) {
    float sum = 0.0f;
    for (int t = 0; t < trainers; ++t) sum += dense_grad(t, u, k);
    w -= kDenseLr * sum;
  }
  return w;
}

struct Case {
  comm::ChannelTransport transport;
  bool one_sided;
  bool map = true;  // one-sided: servers' memory mapped where the transport can (false: RMA gets)
  bool synchronous = true;
  std::int64_t staleness = 0;
  int slow_trainer_ms = 0;  // trainer 0 sleeps this long per step
};

struct Outcome {
  ServeStats served;               // on servers
  std::int64_t max_staleness = 0;  // on trainers, one-sided: the largest staleness read
  std::int64_t deferred_reads = 0;
};

Outcome run_and_check(const Case& c, const config::Config& cfg, Roles roles) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const auto channel = comm::open_message_channel(world, c.transport);
  const int rank = world.rank();
  const bool server = rank >= roles.trainers;
  const int index = rank - roles.trainers;
  const auto& layer = cfg.embeddings.front();
  const auto dim = static_cast<std::size_t>(layer.embedding_vec_size);
  std::vector<int> trainers, servers;
  for (int r = 0; r < roles.trainers + roles.servers; ++r) (r < roles.trainers ? trainers : servers).push_back(r);
  const workloads::SyntheticGenerator gen(cfg.data, cfg.solver.seed, cfg.solver.batchsize);
  embedding::testing::ReferenceModel reference(layer, kTableSeed, kSlotSizes, kSlotOffsets, kBatch,
                                               {layer.embedding_vec_size});
  for (std::int64_t it = 0; it < kSteps; ++it) reference.step(gen.generate_range(it, {0, kBatch}));
  const std::string what = std::to_string(roles.trainers) + " + " + std::to_string(roles.servers) + ", " +
                           (c.one_sided ? (c.map ? "one-sided mapped" : "one-sided gets") : "messages") + ", " +
                           (c.synchronous ? "synchronous" : "asynchronous") + " over " + comm::to_string(c.transport) +
                           ", rank " + std::to_string(rank);
  const auto optimizer = embedding::make_sparse_optimizer(layer.optimizer, layer.embedding_vec_size);
  const std::size_t words_per_row = dim + static_cast<std::size_t>(optimizer->state_width());
  const DenseSlice slice = dense_slice(kDense, roles.servers, std::max(index, 0));
  // Every rank opens the windows together (a trainer's empty).
  std::optional<PullWindows> windows;
  if (c.one_sided) {
    embedding::OwnedKeys mine;
    if (server) mine.add(index, kVocabulary, roles.servers);
    windows.emplace(*channel, server, static_cast<std::size_t>(mine.rows()) * words_per_row, server ? slice.count : 0,
                    c.map);
  }

  Outcome outcome;
  if (!server) {
    PsClient client(*channel, servers, layer.embedding_vec_size, kDense, Placement::kStrided);
    std::optional<OneSidedReader> reader;
    if (c.one_sided) {
      reader.emplace(*windows, servers, layer.embedding_vec_size, c.synchronous ? 0 : c.staleness);
      client.read_one_sided(*reader);
    }
    std::vector<float> dense(kDense), dense_grads(kDense);
    PsTrainer trainer(client, layer.embedding_vec_size, false, kBatch, {}, {dense, dense_grads});
    embedding::StepRecorder recorder;
    for (std::int64_t step = 1; step <= kSteps; ++step) {
      if (rank == 0 && c.slow_trainer_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(c.slow_trainer_ms));
      for (std::size_t k = 0; k < kDense; ++k) dense_grads[k] = dense_grad(rank, step, k);
      recorder.begin_step();
      trainer.step(step, gen.generate(step - 1, rank, roles.trainers), recorder);
      recorder.end_step();
      if (!c.synchronous) continue;
      for (std::size_t k = 0; k < kDense; ++k)
        EXPECT_NEAR(dense[k], dense_expected(roles.trainers, step, k), 1e-4f) << what << ": dense " << k;
    }
    client.finish(kSteps);
    if (reader) outcome = {{}, reader->max_staleness(), reader->deferred_reads()};
  } else {
    const auto shard = static_shard(layer, *optimizer, index, roles.servers,
                                    c.one_sided ? embedding::RowMemory([&](std::size_t words) {
                                      EXPECT_EQ(words, windows->rows().size()) << what;
                                      return windows->rows();
                                    })
                                                : embedding::RowMemory());
    ServerOptions options{trainers, c.synchronous, c.staleness, std::vector<float>(slice.count), {}};
    for (std::size_t k = 0; k < slice.count; ++k) options.dense_values[k] = dense_initial(slice.first + k);
    options.dense_update = [](std::span<float> values, std::span<const float> grads, std::int64_t) {
      for (std::size_t k = 0; k < values.size(); ++k) values[k] -= kDenseLr * grads[k];
    };
    ParameterServer ps(*channel, std::move(options), *shard, *optimizer);
    if (c.one_sided) ps.serve_one_sided(*windows, static_cast<std::int64_t>(words_per_row));
    outcome.served = ps.serve();
    EXPECT_EQ(outcome.served.pushes, roles.trainers * kSteps) << what;
    EXPECT_EQ(outcome.served.pulls, c.one_sided ? 0 : roles.trainers * kSteps) << what;
    // Exactly the ids id % servers == index, every one's row the reference's (synchronous).
    std::set<Key> held, owned;
    RelativeError rows;
    shard->for_each_row([&](Key key, std::span<const float> values) {
      held.insert(key);
      const auto want = reference.values(key, 0, dim);
      for (std::size_t d = 0; d < dim; ++d) rows.add(values[d], want[d]);
    });
    for (Key key = index; key < kVocabulary; key += roles.servers) owned.insert(key);
    EXPECT_EQ(held, owned) << what;
    if (c.synchronous) {
      EXPECT_LT(rows.relative(), kTolerance) << what << ": rows held";
    }
  }
  world.barrier();  // nobody reads the windows any more
  return outcome;
}

TEST(OneSidedPulls, SynchronousStaticTrainingEqualsTheReferenceWithPullsAsMessagesOrOneSided) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  if (role_splits(world.size()).empty()) GTEST_SKIP() << "runs on 2 ranks (1 + 1) and 4 (2 + 2, 3 + 1)";
  for (const auto transport : {comm::ChannelTransport::kMpi, comm::ChannelTransport::kUcx})
    for (const auto& [one_sided, map] : {std::pair{false, true}, {true, true}, {true, false}})
      for (const auto type : {config::OptimizerType::kSGD, config::OptimizerType::kAdam})
        for (const Roles roles : role_splits(world.size()))
          run_and_check({transport, one_sided, map}, static_config(type), roles);
}

// Trainer 0 sleeps each step: the others read ahead until the bound holds them. No read is staler
// than the bound; with more than one trainer some reads waited, and with bound 2 some were stale.
TEST(OneSidedPulls, AsynchronousReadsAreNeverStalerThanTheBound) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  if (role_splits(world.size()).empty()) GTEST_SKIP() << "runs on 2 ranks (1 + 1) and 4 (2 + 2, 3 + 1)";
  for (const std::int64_t bound : {0, 2})
    for (const Roles roles : role_splits(world.size())) {
      const auto transport = bound == 0 ? comm::ChannelTransport::kMpi : comm::ChannelTransport::kUcx;
      const Outcome outcome = run_and_check({transport, true, bound == 0, false, bound, 60},
                                            static_config(config::OptimizerType::kSGD), roles);
      if (world.rank() < roles.trainers) {
        EXPECT_LE(outcome.max_staleness, bound);
        if (roles.trainers > 1 && world.rank() > 0) {
          EXPECT_GT(outcome.deferred_reads, 0) << "bound " << bound << ": no read waited for the slow trainer";
          if (bound > 0) {
            EXPECT_GE(outcome.max_staleness, 1) << "the fast trainers never read ahead";
          }
        }
      }
    }
}

}  // namespace
}  // namespace embscale::ps
