// Checkpoint and restore of a run (run/checkpoint.hpp) against the uninterrupted run as the
// reference, on the 1, 2 and 4 ranks this binary is launched on: for each config below, a run of
// kIterations timed iterations gives the reference losses; a second run saves a checkpoint after
// kSaveAt iterations and ends there; a third resumes from it and runs to kIterations. Its losses
// must be the reference's last kIterations - kSaveAt, bit for bit, and so must the rows every
// rank holds at the end. The configs cover what a checkpoint must carry: static rows with the
// optimizer's state (Adam, AdaGrad), the learning-rate schedule's step, a dynamic table that evicts
// (its buckets and scores under STEP and TIMESTAMP), a composite store (hot_replicated), a dense
// model with replicated and feature-parallel (local) parameters and Dropout, and warm-up
// iterations before the save.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "comm/failure.hpp"
#include "comm/mpi_communicator.hpp"
#include "config/config.hpp"
#include "core/error.hpp"
#include "kv/table_file_format.hpp"
#include "run/training_run.hpp"
#include "workloads/batch_source_factory.hpp"

namespace embscale::run {
namespace {

constexpr std::int64_t kIterations = 8;
constexpr std::int64_t kSaveAt = 3;

const std::string kData =
    R"({"name": "data", "type": "Data", "format": "Synthetic", "slot_size_array": [3000, 2000, 500],
     "synthetic": {"key_distribution": "zipf", "zipf_alpha": 1.05, "nnz_per_slot": 3,
                   "labels": {"model": "planted", "key_scale": 3.0, "dense_scale": 1.0, "seed": 7}},
     "label": {"top": "label", "label_dim": 1}, "dense": {"top": "dense", "dense_dim": 4},
     "sparse": [{"top": "data1", "slot_num": 3}]})";

std::string solver(const std::string& extra) {
  return R"("solver": {"batchsize": 128, "max_iter": )" + std::to_string(kIterations) +
         R"(, "warmup_iter": 2, "seed": 3)" + extra + "}";
}

std::string embedding(const std::string& type_and_sharding, const std::string& storage) {
  return R"({"name": "emb1", )" + type_and_sharding + R"(, "bottom": "data1", "top": "emb1",
       "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 6000, "embedding_vec_size": 8, "combiner": "sum"})" +
         storage + "}";
}

struct Case {
  std::string name;
  std::string optimizer;
  std::string layers;  // after the Data layer
};

std::vector<Case> cases() {
  const std::string dynamic =
      R"(, "storage": {"type": "dynamic", "max_capacity": 512, "init_capacity": 64, "bucket_capacity": 32,
       "safe_check_mode": "IGNORE", "score_strategy": ")";
  const std::string dense_tower = R"(,
    {"name": "flat", "type": "Reshape", "bottom": "emb1", "top": "flat", "leading_dim": 24},
    {"name": "joined", "type": "Concat", "bottom": ["flat", "dense"], "top": "joined"},
    {"name": "fc1", "type": "FusedInnerProduct", "bottom": "joined", "top": "fc1", "fc_param": {"num_output": 16}},
    {"name": "drop", "type": "Dropout", "bottom": "fc1", "top": "drop", "rate": 0.25},
    {"name": "fc2", "type": "InnerProduct", "bottom": "drop", "top": "fc2", "fc_param": {"num_output": 1}},
    {"name": "loss", "type": "BinaryCrossEntropyLoss", "bottom": ["fc2", "label"], "top": "loss"})";
  const std::string feature_parallel = R"(,
    {"name": "flat", "type": "Reshape", "bottom": "emb1", "top": "flat", "leading_dim": 24},
    {"name": "fc1", "type": "InnerProduct", "bottom": "flat", "top": "fc1", "partition_dim": 0, "fc_param": {"num_output": 8}},
    {"name": "relu1", "type": "ReLU", "bottom": "fc1", "top": "relu1"},
    {"name": "fc2", "type": "InnerProduct", "bottom": "relu1", "top": "fc2", "partition_dim": 1, "fc_param": {"num_output": 4}})";
  const std::string sgd_schedule =
      R"("type": "SGD", "sgd_hparam": {"learning_rate": 0.1, "warmup_steps": 6, "decay_start": 7, "decay_steps": 4})";
  return {
      {"all2all_dense static, SGD with its schedule", sgd_schedule,
       embedding(R"("type": "All2AllDenseEmbedding")", "")},
      {"row_wise dynamic STEP, Adam", R"("type": "Adam", "adam_hparam": {"learning_rate": 0.01})",
       embedding(R"("type": "ShardedEmbedding", "sharding": "row_wise")", dynamic + R"(STEP"})")},
      {"distributed_slot dynamic TIMESTAMP, AdaGrad", R"("type": "AdaGrad", "adagrad_hparam": {"learning_rate": 0.05})",
       embedding(R"("type": "DistributedSlotSparseEmbeddingHash")", dynamic + R"(TIMESTAMP"})")},
      {"data_parallel static, AdaGrad", R"("type": "AdaGrad", "adagrad_hparam": {"learning_rate": 0.05})",
       embedding(R"("type": "ShardedEmbedding", "sharding": "data_parallel")", "")},
      {"hot_replicated static, Adam", R"("type": "Adam", "adam_hparam": {"learning_rate": 0.01})",
       embedding(R"("type": "ShardedEmbedding", "sharding": "hot_replicated")", "")},
      {"localized_slot and a dense tower with Dropout, Adam",
       R"("type": "Adam", "adam_hparam": {"learning_rate": 0.01})",
       embedding(R"("type": "LocalizedSlotSparseEmbeddingHash")", "") + dense_tower},
      {"a feature-parallel dense model (local parameters), SGD", sgd_schedule,
       embedding(R"("type": "DistributedSlotSparseEmbeddingHash")", "") + feature_parallel},
  };
}

std::string config_text(const Case& c, const std::string& solver_extra) {
  return R"({"schema_version": 1, )" + solver(solver_extra) + R"(, "optimizer": {)" + c.optimizer +
         R"(}, "layers": [)" + kData + ", " + c.layers + "]}";
}

// The run's losses (the rows at its end are compared through its last checkpoint's files).
struct Outcome {
  std::vector<double> loss;
};

Outcome run(comm::Communicator& world, const std::string& text, std::int64_t max_iter) {
  config::Config config = config::parse_config_text(text, "test");
  config.solver.max_iter = max_iter;
  config::resolve_batch_for_ranks(config, world.size());
  const auto source = workloads::make_batch_source(config);
  return {run_training(world, config, *source, nullptr).measurements.loss};
}

std::filesystem::path scratch(comm::Communicator& world, const std::string& name) {
  std::string path;
  if (world.rank() == 0)
    path = (std::filesystem::temp_directory_path() / ("embscale_ckpt_" + name + "_" + std::to_string(::getpid())))
               .string();
  return comm::broadcast_strings(world, {path}).front();
}

// The files every rank wrote into a checkpoint, name -> bytes.
std::map<std::string, std::string> files_of(const std::filesystem::path& directory) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".kv") || name.ends_with(".bin")) {
      std::ifstream in(entry.path(), std::ios::binary);
      files[name] = std::string(std::istreambuf_iterator<char>(in), {});
    }
  }
  return files;
}

// A table file's entries, key -> row and optimizer state.
std::map<std::uint64_t, std::vector<float>> entries_without_scores(const std::string& bytes, const std::string& name) {
  const auto contents = kv::parse_table_file(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()), name);
  std::map<std::uint64_t, std::vector<float>> entries;
  const std::size_t width = contents.keys.empty() ? 0 : contents.values.size() / contents.keys.size();
  for (std::size_t i = 0; i < contents.keys.size(); ++i)
    entries[contents.keys[i]].assign(contents.values.begin() + static_cast<std::ptrdiff_t>(i * width),
                                     contents.values.begin() + static_cast<std::ptrdiff_t>((i + 1) * width));
  return entries;
}

TEST(Checkpoint, AResumedRunHasTheUninterruptedRunsLossesAndRows) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name + " on " + std::to_string(world.size()) + " ranks");
    const auto root = scratch(world, "a");
    const std::string saved_by_whole = root.string() + "/whole", saved_by_part = root.string() + "/part";
    // The reference: every iteration, a checkpoint at its end (the final rows).
    const auto whole = run(world,
                           config_text(c, R"(, "checkpoint": {"directory": ")" + saved_by_whole + R"(", "interval": )" +
                                              std::to_string(kIterations) + "}"),
                           kIterations);
    // Interrupted after kSaveAt, and resumed, saving at the end too.
    (void)run(world,
              config_text(c, R"(, "checkpoint": {"directory": ")" + saved_by_part + R"(", "interval": )" +
                                 std::to_string(kSaveAt) + "}"),
              kSaveAt);
    const auto resumed = run(world,
                             config_text(c, R"(, "checkpoint": {"directory": ")" + saved_by_part +
                                                R"(", "interval": )" + std::to_string(kIterations) +
                                                R"(, "resume_from": ")" + saved_by_part + "/iteration-00000003\"}"),
                             kIterations);
    ASSERT_EQ(whole.loss.size(), static_cast<std::size_t>(kIterations));
    ASSERT_EQ(resumed.loss.size(), static_cast<std::size_t>(kIterations - kSaveAt));
    for (std::size_t i = 0; i < resumed.loss.size(); ++i)
      EXPECT_EQ(resumed.loss[i], whole.loss[i + kSaveAt]) << "timed iteration " << i + kSaveAt;
    // The rows, optimizer state, scores and dense parameters at the end: the same files.
    world.barrier();
    const auto end = "/iteration-0000000" + std::to_string(kIterations);
    const auto a = files_of(saved_by_whole + end), b = files_of(saved_by_part + end);
    EXPECT_FALSE(a.empty());
    EXPECT_EQ(a.size(), b.size());
    // Byte for byte, but for a TIMESTAMP table's scores, which are the clock's: its entries are
    // compared key by key without them.
    const bool clock_scores = c.name.find("TIMESTAMP") != std::string::npos;
    for (const auto& [name, bytes] : a) {
      ASSERT_TRUE(b.contains(name)) << name;
      if (!clock_scores || !name.ends_with(".kv")) {
        EXPECT_TRUE(bytes == b.at(name)) << name << " differs at the end";
        continue;
      }
      EXPECT_EQ(entries_without_scores(bytes, name), entries_without_scores(b.at(name), name)) << name;
    }
    world.barrier();
    if (world.rank() == 0) std::filesystem::remove_all(root);
  }
}

// A checkpoint saved by every rank of the world, resumed on rank 0 alone (the other ranks wait):
// static rows and a replicated dense model move to one rank. The rows, optimizer state and step
// counts are then the saved ones exactly, so the losses after it are the uninterrupted run's up to
// the order in which the ranks' partial sums round (checked to 1e-5 relative). A dynamic table is
// refused by name: its buckets and clock are its rank's.
TEST(Checkpoint, StaticRowsResumeOnAnotherRankCount) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  if (world.size() == 1) GTEST_SKIP() << "needs 2 or more ranks to change the count";
  const auto root = scratch(world, "c");
  MPI_Comm alone_handle = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world.rank() == 0 ? 0 : MPI_UNDEFINED, 0, &alone_handle);
  const auto all = cases();
  for (std::size_t k = 0; k < all.size(); ++k) {
    const Case& c = all[k];
    const bool moves =
        c.name.find("dynamic") == std::string::npos && c.name.find("feature-parallel") == std::string::npos;
    SCOPED_TRACE(c.name + ", saved on " + std::to_string(world.size()) + " ranks, resumed on 1");
    const std::string saved = root.string() + "/" + std::to_string(k);
    const auto whole = run(world, config_text(c, ""), kIterations);
    (void)run(world,
              config_text(c, R"(, "checkpoint": {"directory": ")" + saved + R"(", "interval": )" +
                                 std::to_string(kSaveAt) + "}"),
              kSaveAt);
    if (world.rank() == 0) {
      comm::MpiCommunicator alone(alone_handle);
      const std::string resume = config_text(c, R"(, "checkpoint": {"resume_from": ")" + saved + "\"}");
      if (!moves) {
        EXPECT_THROW((void)run(alone, resume, kIterations), comm::AgreedFailure);
        continue;
      }
      const auto resumed = run(alone, resume, kIterations);
      ASSERT_EQ(resumed.loss.size(), static_cast<std::size_t>(kIterations - kSaveAt));
      for (std::size_t i = 0; i < resumed.loss.size(); ++i)
        EXPECT_NEAR(resumed.loss[i], whole.loss[i + kSaveAt], 1e-5 * std::abs(whole.loss[i + kSaveAt]))
            << "timed iteration " << i + kSaveAt;
    }
  }
  if (alone_handle != MPI_COMM_NULL) MPI_Comm_free(&alone_handle);
  world.barrier();
  if (world.rank() == 0) std::filesystem::remove_all(root);
}

TEST(Checkpoint, AResumeThatCannotContinueIsRefusedByName) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const Case c = cases()[1];
  const auto root = scratch(world, "b");
  const std::string saved = root.string() + "/ckpt";
  (void)run(world, config_text(c, R"(, "checkpoint": {"directory": ")" + saved + R"(", "interval": 2})"), 4);
  const auto refusal = [&](const std::string& text, std::int64_t max_iter) {
    try {
      (void)run(world, text, max_iter);
    } catch (const comm::AgreedFailure& f) {
      return f.exit_code;
    }
    return 0;
  };
  const std::string resume = R"(, "checkpoint": {"resume_from": ")" + saved + "\"}";
  // The newest complete checkpoint of the directory (iteration 4) runs on to 8.
  EXPECT_EQ(run(world, config_text(c, resume), kIterations).loss.size(), static_cast<std::size_t>(kIterations - 4));
  // Another seed: another run; nothing left to run; no checkpoint there.
  std::string other = config_text(c, resume);
  other.replace(other.find("\"seed\": 3"), 9, "\"seed\": 4");
  EXPECT_EQ(refusal(other, kIterations), kExitBadInput);
  EXPECT_EQ(refusal(config_text(c, resume), 4), kExitBadInput);
  EXPECT_EQ(refusal(config_text(c, R"(, "checkpoint": {"resume_from": ")" + root.string() + "/none\"}"), kIterations),
            kExitBadInput);
  world.barrier();
  if (world.rank() == 0) std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace embscale::run
