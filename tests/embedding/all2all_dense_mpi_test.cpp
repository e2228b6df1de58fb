// The distributed All2All dense embedding against a plain single-process model.
//
// Every rank runs N training steps on its share of the same global batches; every rank also runs
// the reference (one process, whole global batch, a std::map table in double precision) and
// checks the rows it owns. Tolerance: the distributed path stores and sums in float
// (relative rounding 2^-24 ~ 6e-8 per operation) in another order than the double reference.
// Row values stay below ~0.1 and a row sees at most a few hundred float operations over the run,
// so the difference is bounded by ~1e-7; we allow 1e-5 absolute, 100x that bound, still far
// below a single update (lr * |gradient| ~ 1e-4), so a dropped or doubled update fails.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <map>

#include "comm/mpi_communicator.hpp"
#include "embedding/all2all_dense.hpp"
#include "embedding/initializer.hpp"
#include "embedding/regression_objective.hpp"
#include "workloads/synthetic.hpp"

namespace embscale::embedding {
namespace {

config::Config test_config(config::Combiner combiner, config::KeyDistribution distribution) {
  config::Config c;
  c.solver.batchsize = 24;
  c.solver.max_iter = 6;
  c.solver.seed = 1234;
  c.data.format = config::DataFormat::kSynthetic;
  c.data.slot_size_array = {40, 9, 300};
  c.data.slot_num = 3;
  c.data.label_dim = 1;
  config::SlotWorkload slot;
  slot.keys.distribution = distribution;
  slot.keys.zipf_alpha = 1.05;
  slot.nnz = 3;
  c.data.synthetic = config::SyntheticSource::same_for_all(slot, c.data.slot_num);
  config::EmbeddingLayer e;
  e.name = "emb1";
  e.type = "All2AllDenseEmbedding";
  e.max_vocabulary_size_per_gpu = 1000;
  e.embedding_vec_size = 6;
  e.combiner = combiner;
  e.optimizer.learning_rate = 0.5;
  c.embeddings.push_back(e);
  return c;
}

// The reference: the same math on the whole global batch, in double, with no communication.
class ReferenceModel {
 public:
  ReferenceModel(const config::Config& c, std::int64_t vocabulary)
      : dim_(static_cast<std::size_t>(c.embeddings[0].embedding_vec_size)),
        mean_(c.embeddings[0].combiner == config::Combiner::kMean),
        lr_(c.embeddings[0].optimizer.learning_rate), batch_(c.solver.batchsize),
        init_(UniformInitializer::for_vocabulary(table_seed(c.solver.seed, 0), vocabulary)) {}

  double step(const Batch& batch) {
    std::map<Key, std::vector<double>> grads;
    double loss = 0;
    for (std::int64_t b = 0; b < batch.num_bags(); ++b) {
      const auto keys = batch.bag(b);
      std::vector<double> pooled(dim_, 0.0);
      for (const Key k : keys)
        for (std::size_t d = 0; d < dim_; ++d) pooled[d] += row(k)[d];
      const double scale = mean_ && !keys.empty() ? 1.0 / static_cast<double>(keys.size()) : 1.0;
      const double target = regression_target(batch, b / batch.num_slots);
      for (std::size_t d = 0; d < dim_; ++d) {
        const double diff = pooled[d] * scale - target;
        loss += 0.5 * diff * diff / static_cast<double>(batch_);
        for (const Key k : keys) {
          auto& g = grads[k];
          g.resize(dim_, 0.0);
          g[d] += scale * diff / static_cast<double>(batch_);
        }
      }
    }
    for (const auto& [k, g] : grads)
      for (std::size_t d = 0; d < dim_; ++d) row(k)[d] -= lr_ * g[d];
    return loss;
  }

  std::vector<double>& row(Key k) {
    auto it = rows_.find(k);
    if (it == rows_.end()) {
      std::vector<float> initial(dim_);
      init_(k, initial);
      it = rows_.emplace(k, std::vector<double>(initial.begin(), initial.end())).first;
    }
    return it->second;
  }

 private:
  std::size_t dim_;
  bool mean_;
  double lr_;
  std::int64_t batch_;
  UniformInitializer init_;
  std::map<Key, std::vector<double>> rows_;
};

void expect_matches_reference(const config::Config& c) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const workloads::SyntheticGenerator gen(c.data, c.solver.seed, c.solver.batchsize);
  All2AllDenseEmbedding layer(world, c.embeddings[0], gen.total_vocabulary(), table_seed(c.solver.seed, 0));
  ReferenceModel reference(c, gen.total_vocabulary());
  PhaseClock clock;
  const auto dim = static_cast<std::size_t>(c.embeddings[0].embedding_vec_size);
  for (std::int64_t it = 0; it < c.solver.max_iter; ++it) {
    const Batch batch = gen.generate(it, world.rank(), world.size());
    std::vector<float> pooled(static_cast<std::size_t>(batch.num_bags()) * dim), grad(pooled.size());
    clock.clear();
    clock.start();
    layer.forward(batch, pooled, clock);
    const double local_loss = regression_loss_and_gradient(batch, pooled, c.embeddings[0].embedding_vec_size,
                                                           c.solver.batchsize, grad);
    layer.backward(batch, grad, clock);
    // The phases it records are the ones it declares, in order, each with a meaning.
    ASSERT_EQ(clock.phases().size(), All2AllDenseEmbedding::kPhases.size());
    for (std::size_t p = 0; p < clock.phases().size(); ++p) {
      EXPECT_EQ(clock.phases()[p].first, All2AllDenseEmbedding::kPhases[p].name);
      EXPECT_GT(std::string_view(All2AllDenseEmbedding::phase_meaning(clock.phases()[p].first)).size(), 10u);
    }

    const double loss = world.allreduce(local_loss, comm::ReduceOp::kSum);
    const double expected_loss = reference.step(gen.generate(it, 0, 1));
    EXPECT_NEAR(loss, expected_loss, 1e-5 * std::max(1.0, expected_loss)) << "iteration " << it;
  }
  // Every row this rank owns, touched or not, equals the reference's.
  std::size_t checked = 0;
  for (Key k = world.rank(); k < gen.total_vocabulary(); k += world.size(), ++checked) {
    const auto got = layer.table().row(k);
    const auto& want = reference.row(k);
    for (std::size_t d = 0; d < dim; ++d) ASSERT_NEAR(got[d], want[d], 1e-5) << "key " << k << " dim " << d;
  }
  EXPECT_GT(checked, 0u);
}

TEST(All2AllDenseMpi, SumCombinerMatchesSingleProcessReference) {
  expect_matches_reference(test_config(config::Combiner::kSum, config::KeyDistribution::kZipf));
}

TEST(All2AllDenseMpi, MeanCombinerMatchesSingleProcessReference) {
  expect_matches_reference(test_config(config::Combiner::kMean, config::KeyDistribution::kUniform));
}

TEST(All2AllDenseMpi, TrainingReducesTheLoss) {
  auto c = test_config(config::Combiner::kSum, config::KeyDistribution::kZipf);
  c.solver.max_iter = 30;
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const workloads::SyntheticGenerator gen(c.data, c.solver.seed, c.solver.batchsize);
  All2AllDenseEmbedding layer(world, c.embeddings[0], gen.total_vocabulary(), table_seed(c.solver.seed, 0));
  PhaseClock clock;
  // The same batch every step: the loss on it must fall.
  const Batch batch = gen.generate(0, world.rank(), world.size());
  std::vector<float> pooled(static_cast<std::size_t>(batch.num_bags()) * 6), grad(pooled.size());
  double first = 0, last = 0;
  for (int it = 0; it < 30; ++it) {
    layer.forward(batch, pooled, clock);
    const double loss = world.allreduce(regression_loss_and_gradient(batch, pooled, 6, c.solver.batchsize, grad),
                                        comm::ReduceOp::kSum);
    layer.backward(batch, grad, clock);
    (it == 0 ? first : last) = loss;
  }
  EXPECT_LT(last, 0.5 * first);
}

}  // namespace
}  // namespace embscale::embedding
