// The engine's drivers of the caller-clocked score strategies (config::EmbeddingStorage's
// epoch_steps and custom_score; EmbeddingEngine::drive_score_clocks), against a reference written
// from the rules' words: on one rank (MPI_COMM_SELF, on every rank of the launch), a dynamic
// table large enough never to evict, ten steps of Zipf batches; then every key's score is what its
// history of steps says:
//   CUSTOMIZED, custom_score "step": the number (1-based) of the last step that read it;
//   EPOCH_LFU, epoch_steps 3: (e << 32) | the steps of epoch e that read it, e its last epoch
//     ((step - 1) / 3);
//   EPOCH_LRU, epoch_steps 4: its high 32 bits are its last step's epoch.
// A step reads each of its distinct keys once (one find_or_insert), and the update that follows
// changes rows, not scores.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "comm/mpi_communicator.hpp"
#include "config/config.hpp"
#include "embedding/engine.hpp"
#include "embedding/kv_row_store.hpp"
#include "embedding/step_recorder.hpp"
#include "kv/kv_table.hpp"
#include "workloads/batch_source_factory.hpp"

namespace embscale::embedding {
namespace {

constexpr std::int64_t kSteps = 10;

std::string config_text(const std::string& strategy, const std::string& driver) {
  return R"({"schema_version": 1, "solver": {"batchsize": 64, "max_iter": 10, "seed": 9},
    "optimizer": {"type": "SGD", "sgd_hparam": {"learning_rate": 0.05}},
    "layers": [
      {"name": "data", "type": "Data", "format": "Synthetic", "slot_size_array": [3000, 1000],
       "synthetic": {"key_distribution": "zipf", "zipf_alpha": 1.1, "nnz_per_slot": 2},
       "label": {"top": "label"}, "sparse": [{"top": "data1", "slot_num": 2}]},
      {"name": "emb1", "type": "All2AllDenseEmbedding", "bottom": "data1", "top": "emb1",
       "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 8000, "embedding_vec_size": 4, "combiner": "sum"},
       "storage": {"type": "dynamic", "max_capacity": 16384, "bucket_capacity": 64, "score_strategy": ")" +
         strategy + "\"" + driver + "}}]}";
}

// Runs kSteps steps; returns every held key's score, and per key the steps that read it.
struct History {
  std::map<std::int64_t, std::uint64_t> scores;
  std::map<std::int64_t, std::vector<std::int64_t>> steps_of;
};

History run_steps(const std::string& strategy, const std::string& driver) {
  comm::MpiCommunicator self(MPI_COMM_SELF);
  const config::Config config = config::parse_config_text(config_text(strategy, driver), strategy);
  const auto source = workloads::make_batch_source(config);
  EmbeddingEngine engine(self, config, source->slot_sizes());
  StepRecorder recorder(engine.make_phase_clock());
  History h;
  for (std::int64_t step = 1; step <= kSteps; ++step) {
    const Batch batch = source->next_batch(step - 1, 0, 1);
    engine.step(batch, recorder);
    for (const Key key : std::set<Key>(batch.keys.begin(), batch.keys.end())) h.steps_of[key].push_back(step);
  }
  const auto& table = dynamic_cast<KvRowStore&>(engine.store(0)).table();
  kv::Entries<std::int64_t> entries;
  table.export_batch(0, table.capacity(), entries);
  for (std::size_t i = 0; i < entries.size(); ++i) h.scores[entries.keys[i]] = entries.scores[i];
  return h;
}

TEST(ScoreDrivers, CustomizedScoresAreTheLastStepThatReadTheKey) {
  const History h = run_steps("CUSTOMIZED", "");  // "step" is the default
  ASSERT_EQ(h.scores.size(), h.steps_of.size()) << "a key was evicted or never stored";
  for (const auto& [key, steps] : h.steps_of) EXPECT_EQ(h.scores.at(key), static_cast<std::uint64_t>(steps.back()));
  // "none": every score stays the set_score value 0.
  for (const auto& [key, score] : run_steps("CUSTOMIZED", R"(, "custom_score": "none")").scores) EXPECT_EQ(score, 0u);
}

TEST(ScoreDrivers, EpochLfuCountsTheStepsOfTheKeysLastEpoch) {
  constexpr std::int64_t kEpochSteps = 3;
  const History h = run_steps("EPOCH_LFU", R"(, "epoch_steps": 3)");
  ASSERT_EQ(h.scores.size(), h.steps_of.size());
  std::set<std::uint64_t> epochs;
  for (const auto& [key, steps] : h.steps_of) {
    const std::int64_t last_epoch = (steps.back() - 1) / kEpochSteps;
    std::uint64_t in_last = 0;
    for (const auto s : steps) in_last += (s - 1) / kEpochSteps == last_epoch ? 1 : 0;
    EXPECT_EQ(h.scores.at(key), (static_cast<std::uint64_t>(last_epoch) << 32) | in_last) << "key " << key;
    epochs.insert(static_cast<std::uint64_t>(last_epoch));
  }
  EXPECT_EQ(*epochs.rbegin(), static_cast<std::uint64_t>((kSteps - 1) / kEpochSteps)) << "the epochs advanced";
}

TEST(ScoreDrivers, EpochLruScoresCarryTheLastStepsEpoch) {
  const History h = run_steps("EPOCH_LRU", R"(, "epoch_steps": 4)");
  ASSERT_EQ(h.scores.size(), h.steps_of.size());
  for (const auto& [key, steps] : h.steps_of)
    EXPECT_EQ(h.scores.at(key) >> 32, static_cast<std::uint64_t>((steps.back() - 1) / 4)) << "key " << key;
  // Without epoch_steps the epoch stays 0.
  for (const auto& [key, score] : run_steps("EPOCH_LRU", "").scores) EXPECT_EQ(score >> 32, 0u);
}

}  // namespace
}  // namespace embscale::embedding
