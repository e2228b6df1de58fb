// IncrementalDumps against an independent reading of its files, on the 1, 2 and 4 ranks this
// binary is launched on: the engine steps a dynamic layer, a dump follows every few steps, and after
// each dump the files of every dump so far, loaded in order into an empty table (the first whole,
// the later ones "changed since"), must hold every row the rank's store holds, exactly. That is
// what a serving system that follows the dumps relies on; it holds under the strategies whose
// scores grow with time (STEP, TIMESTAMP), with eviction on (a full table) and off, in both modes.
// The manifests are read back too: one per dump, each rank's file and entry count.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/mpi_communicator.hpp"
#include "config/config.hpp"
#include "embedding/engine.hpp"
#include "embedding/step_recorder.hpp"
#include "kv/host_kv_table.hpp"
#include "run/online_dumps.hpp"
#include "workloads/batch_source_factory.hpp"

namespace embscale::run {
namespace {

constexpr std::int64_t kSteps = 9;
constexpr std::int64_t kInterval = 3;

std::string config_text(const std::string& strategy, std::int64_t capacity, const std::string& mode,
                        const std::filesystem::path& directory) {
  return R"({"schema_version": 1,
    "solver": {"batchsize": 128, "max_iter": )" +
         std::to_string(kSteps) + R"(, "seed": 11,
               "incremental_dump": {"interval": )" +
         std::to_string(kInterval) + R"(, "directory": ")" + directory.string() + R"(", "mode": ")" + mode + R"("}},
    "optimizer": {"type": "Adam", "adam_hparam": {"learning_rate": 0.01}},
    "layers": [
      {"name": "data", "type": "Data", "format": "Synthetic", "slot_size_array": [4000, 3000],
       "synthetic": {"key_distribution": "zipf", "zipf_alpha": 1.1, "nnz_per_slot": 4},
       "label": {"top": "label"}, "sparse": [{"top": "data1", "slot_num": 2}]},
      {"name": "emb1", "type": "All2AllDenseEmbedding", "bottom": "data1", "top": "emb1",
       "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 8000, "embedding_vec_size": 8, "combiner": "sum"},
       "storage": {"type": "dynamic", "max_capacity": )" +
         std::to_string(capacity) + R"(, "bucket_capacity": 64, "score_strategy": ")" + strategy +
         R"(", "safe_check_mode": "IGNORE"}}]})";
}

// Every file of `rank` in the dumps up to `through`, in order, restored into one table.
std::unique_ptr<kv::HostKvTable<std::int64_t>> replay(const std::filesystem::path& root,
                                                      const kv::TableOptions& options, int rank, int ranks,
                                                      std::int64_t through) {
  kv::TableOptions big = options;
  big.max_capacity = std::int64_t{1} << 16;
  big.init_capacity = big.max_capacity;
  auto table = std::make_unique<kv::HostKvTable<std::int64_t>>(big);
  for (std::int64_t d = kInterval; d <= through; d += kInterval)
    table->load(iteration_directory(root, d) /
                ("emb1.rank-" + std::to_string(rank) + "-of-" + std::to_string(ranks) + ".kv"));
  return table;
}

void check_dumps(const std::string& strategy, std::int64_t capacity, const std::string& mode) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  SCOPED_TRACE(strategy + ", capacity " + std::to_string(capacity) + ", " + mode);
  std::filesystem::path root;
  if (world.rank() == 0)
    root = std::filesystem::temp_directory_path() / ("embscale_online_dumps_" + std::to_string(::getpid()));
  root = comm::broadcast_strings(world, {root.string()}).front();
  const config::Config config = config::parse_config_text(config_text(strategy, capacity, mode, root), "test");
  const auto source = workloads::make_batch_source(config);
  embedding::EmbeddingEngine engine(world, config, source->slot_sizes());
  IncrementalDumps dumps(world, config, engine);
  embedding::StepRecorder recorder(engine.make_phase_clock());
  const auto& store = engine.store(0);
  std::int64_t evicted_somewhere = 0;
  for (std::int64_t it = 0; it < kSteps; ++it) {
    dumps.mark_step(dumps.writing());
    engine.step(source->next_batch(it, world.rank(), world.size()), recorder);
    for (const auto& [name, value] : recorder.counters())
      if (name == "evictions") evicted_somewhere += value;
    if (!dumps.due(it)) continue;
    dumps.dump(it + 1);
    // A background dump's files are complete once the next dump or finish has joined its writer;
    // the store may have moved on by then, so the check runs on a blocking dump's files at once,
    // and on the background ones after finish (below) against the store's final rows.
    if (mode == "background") continue;
    const auto replayed = replay(root, *store.table_options(), world.rank(), world.size(), it + 1);
    std::int64_t held = 0;
    std::vector<float> row(8);
    std::vector<std::uint8_t> found(1);
    store.for_each_row([&](std::int64_t key, std::span<const float> values) {
      ++held;
      std::vector<float> full(static_cast<std::size_t>(replayed->row_width()));
      replayed->find(std::span<const std::int64_t>(&key, 1), full, found);
      ASSERT_TRUE(found[0]) << "key " << key << " is held but in no dump";
      for (std::size_t v = 0; v < values.size(); ++v) ASSERT_EQ(full[v], values[v]) << "key " << key << ", value " << v;
    });
    EXPECT_GT(held, 0);
  }
  const OnlineDumpResults results = dumps.finish(kSteps);
  ASSERT_EQ(results.dumps.size(), static_cast<std::size_t>(kSteps / kInterval));
  EXPECT_EQ(results.overlapped.size(), mode == "background" ? static_cast<std::size_t>(kSteps) : 0u);
  if (mode == "background") {  // the last dump followed the last step: its replay is the final table
    const auto replayed = replay(root, *store.table_options(), world.rank(), world.size(), kSteps);
    std::vector<std::uint8_t> found(1);
    store.for_each_row([&](std::int64_t key, std::span<const float> values) {
      std::vector<float> full(static_cast<std::size_t>(replayed->row_width()));
      replayed->find(std::span<const std::int64_t>(&key, 1), full, found);
      ASSERT_TRUE(found[0]) << "key " << key << " is held but in no dump";
      for (std::size_t v = 0; v < values.size(); ++v) ASSERT_EQ(full[v], values[v]) << "key " << key;
    });
  }
  // The first dump holds every entry. Without eviction the table only grows, and the last dump
  // holds only what its three steps touched: fewer entries than the table.
  const auto table_entries =
      static_cast<std::int64_t>(world.allreduce(static_cast<double>(store.size()), comm::ReduceOp::kSum));
  EXPECT_GT(results.dumps.front().entries, 0);
  if (capacity >= 4000) {
    EXPECT_LT(results.dumps.back().entries, table_entries);
  }
  for (const auto& d : results.dumps) {
    EXPECT_GT(d.bytes, 0);
    EXPECT_GE(d.stall_s, d.copy_s);
    std::ifstream in(iteration_directory(root, d.iteration) / "manifest.json");
    ASSERT_TRUE(in) << "no manifest for iteration " << d.iteration;
    const auto manifest = nlohmann::json::parse(in);
    EXPECT_EQ(manifest["iteration"], d.iteration);
    EXPECT_EQ(manifest["ranks"], world.size());
    const auto& files = manifest["layers"][0]["files"];
    ASSERT_EQ(files.size(), static_cast<std::size_t>(world.size()));
    std::int64_t entries = 0;
    for (const auto& f : files) {
      entries += f["entries"].get<std::int64_t>();
      EXPECT_TRUE(std::filesystem::exists(iteration_directory(root, d.iteration) / f["file"].get<std::string>()));
    }
    EXPECT_EQ(entries, d.entries);
  }
  if (capacity < 4000) {
    EXPECT_GT(world.allreduce(static_cast<double>(evicted_somewhere), comm::ReduceOp::kSum), 0);
  }
  world.barrier();
  if (world.rank() == 0) std::filesystem::remove_all(root);
}

TEST(OnlineDumps, ReplayedDumpsHoldEveryRowTheTableHoldsWithoutEviction) {
  for (const char* strategy : {"STEP", "TIMESTAMP"}) check_dumps(strategy, 1 << 14, "blocking");
}

TEST(OnlineDumps, ReplayedDumpsHoldEveryRowTheTableHoldsUnderEviction) {
  for (const char* strategy : {"STEP", "TIMESTAMP"}) check_dumps(strategy, 512, "blocking");
}

TEST(OnlineDumps, BackgroundDumpsHoldWhatBlockingOnesDo) { check_dumps("STEP", 512, "background"); }

}  // namespace
}  // namespace embscale::run
