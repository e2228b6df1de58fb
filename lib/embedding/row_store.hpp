// RowStore: the narrow seam every storage of an embedding layer meets: the static array
// (static_row_store.hpp) and the dynamic KV table (kv_row_store.hpp). A scheme reads rows and
// applies the optimizer through it and never knows which storage it has.
//
// A row is [dim embedding values | state_width optimizer-state values], initialised by the one
// row initializer of every storage (kv::initial_row: a pure function of the table seed and the
// key), so a static and a dynamic table of one seed start from the same rows.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/batch.hpp"
#include "core/error.hpp"
#include "core/execution_context.hpp"
#include "embedding/sparse_optimizer.hpp"
#include "kv/access_observer.hpp"
#include "kv/kv_table.hpp"

namespace embscale::embedding {

// What the table did since the last take_counters() (results/schema.md: the table counters).
struct StoreCounters {
  std::int64_t hits = 0;          // keys read that the table held
  std::int64_t misses = 0;        // keys read that it did not hold
  std::int64_t inserts = 0;       // keys added
  std::int64_t evictions = 0;     // keys removed to make room
  std::int64_t refused = 0;       // keys that could not be inserted (their bucket full of higher scores)
  std::int64_t not_admitted = 0;  // new keys the admission filter kept out
  // Two-tier stores: keys read that the fast tier did not hold (found in the slow tier, or new),
  // what plan/tier_model.hpp predicts as misses; 0 for the other stores.
  std::int64_t fast_tier_misses = 0;
};

// Where a static store keeps its rows when not in memory of its own: `words` floats, zeroed, that
// outlive the store (a parameter server's rows in memory its trainers read one-sidedly,
// lib/ps/one_sided_pulls.hpp).
using RowMemory = std::function<std::span<float>(std::size_t words)>;

// Refuses (embscale::Error naming `who`) a context outside host memory: what a host store or a
// scheme whose pooling runs on the host says where it is built, never at a step.
void require_host_context(const ExecutionContext& context, std::string_view who);

class RowStore {
 public:
  virtual ~RowStore() = default;

  virtual std::int32_t dim() const noexcept = 0;
  virtual std::int32_t state_width() const noexcept = 0;
  // Where its calls run and where the spans of read, row_pointers and apply live (fixed when the
  // store is made, from the layer's LayerSpec::context). The stores of this folder are host
  // stores; a device store reads and writes device memory on the context's stream.
  virtual ExecutionContext execution_context() const = 0;
  // Rows held now.
  virtual std::int64_t size() const = 0;

  // The embedding values (dim each) of the distinct `keys` into `rows` (keys.size() x dim).
  // Training: a dynamic store inserts a missing key with its initial row (capacity and admission
  // permitting); evaluation (the table's mode, or set_evaluating): a missing key reads the eval
  // initializer and is not inserted, and no score changes. A static store holds every key it owns;
  // a key it does not own is an Error.
  virtual void read(std::span<const Key> keys, std::span<float> rows) = 0;
  // Whether reads evaluate (a run's evaluation batches: HugeCTR's eval forward reads the tables
  // it trains without changing them). A static store's reads never change it: nothing to do. A
  // store that cannot evaluate without changing throws.
  virtual void set_evaluating(bool evaluating) { (void)evaluating; }
  // Where the store can, the address of each of the distinct `keys`' embedding values (dim fp32
  // values) into `rows` (keys.size() pointers), counted as reads; valid until the next call that
  // changes the store. Pooling then reads the rows where they are instead of copies (the copy of
  // read() doubles the memory traffic of a lookup). False when the store cannot (rows stored as
  // fp16/bf16, or a table that moves rows): the caller calls read().
  virtual bool row_pointers(std::span<const Key> keys, std::span<const float*> rows) {
    (void)keys;
    (void)rows;
    return false;
  }
  // Applies `optimizer` at `step` to the rows of the distinct `keys` with their combined gradients
  // `grads` (keys.size() x dim). A key a dynamic store no longer holds (evicted since it was read)
  // is skipped. Under the Global update type every other held row is updated too.
  virtual void apply(std::span<const Key> keys, std::span<const float> grads, const SparseOptimizer& optimizer,
                     std::int64_t step) = 0;

  // For tests and the reference comparison: the embedding values of `key`, false when not held.
  virtual bool row(Key key, std::span<float> out) const = 0;
  // Every held key and its embedding values, in no particular order.
  virtual void for_each_row(const std::function<void(Key, std::span<const float>)>& visit) const = 0;

  // The counters since the last call, then zeroed.
  virtual StoreCounters take_counters() = 0;

  // The eviction study's seam (lib/sim/eviction_study.hpp), for the stores that evict by score.
  // The slots of the tier that evicts (the table's max_capacity; caching mode: the fast tier's),
  // 0 for a store that never evicts (static; hybrid mode, placed by hash).
  virtual std::int64_t evicting_capacity() const { return 0; }
  // Every key that tier holds now, in no particular order.
  virtual void for_each_evicting_key(const std::function<void(Key)>& visit) const { (void)visit; }
  // The score clock of a table whose strategy reads the caller's (EmbeddingEngine's drivers,
  // config::EmbeddingStorage::epoch_steps and custom_score): the epoch (EPOCH_LRU, EPOCH_LFU) and
  // the set_score value (CUSTOMIZED) of the calls that follow; an observer is told too. Nothing
  // for a store without one.
  virtual void set_score_clock(std::uint32_t epoch, std::uint64_t score) {
    (void)epoch;
    (void)score;
  }
  // From now on, every read call is shown to `observer` (null: to none). Stores that never evict
  // show nothing.
  virtual void set_access_observer(kv::AccessObserver* observer) { (void)observer; }

  // A dynamic store's table as a file and back (a parameter server's shard: lib/ps/shard_files).
  // The table's options (what a dump must match); null for a store without a table (static).
  virtual const kv::TableOptions* table_options() const { return nullptr; }
  // Every entry (both tiers' of a tiered store) in the KV table's dump format (kv/table_file.hpp),
  // written atomically at `path`. An Error for a store without a table.
  virtual void dump_table(const std::filesystem::path& path) const {
    throw Error(path.string() + ": this store has no table to dump (static storage)");
  }
  // Checkpoints of a run (lib/run/checkpoint.hpp). save_checkpoint writes every row the store
  // holds, with its optimizer state and score, in the KV table's dump format (kv/table_file.hpp:
  // atomic, checksummed) to files named `stem` plus a suffix (".kv"; a store of two parts writes
  // one per part), and returns each of its tables' capacity and clock (TableClock), which the
  // checkpoint keeps beside the files. load_checkpoint reads them into a store made as this one was
  // (the same layer of the same config, on the same rank of as many ranks): it then holds exactly
  // what the saved store held, bucketed alike, and scores on from where it did, so that the steps
  // after it are the steps after the save. An Error for a store that cannot (the default: the
  // two-tier stores and the GPU stores).
  struct TableClock {
    std::int64_t capacity = 0;    // slots (KvTable::capacity)
    std::uint64_t score_now = 0;  // KvTable::get_score
  };
  virtual std::vector<TableClock> save_checkpoint(const std::filesystem::path& stem) const {
    throw Error(stem.string() + ": this layer's storage cannot be checkpointed (two-tier or GPU storage)");
  }
  virtual void load_checkpoint(const std::filesystem::path& stem, std::span<const TableClock> clocks) {
    (void)clocks;
    throw Error(stem.string() +
                ": this layer's storage cannot be restored from a checkpoint (two-tier or GPU storage)");
  }
  // The same from a checkpoint saved on another number of ranks: `stems` are every saving rank's,
  // in rank order, and the store takes from them the rows it owns (a replica's from the first file
  // that has them). Static stores only: a dynamic table's buckets, capacity and clock are its
  // rank's, and its keys' owner is the scheme's, not the store's. An Error for the others.
  virtual void load_resharded_checkpoint(std::span<const std::filesystem::path> stems) {
    throw Error((stems.empty() ? std::string("a checkpoint") : stems.front().string()) +
                ": this layer's storage is restored only on the rank count that saved it (dynamic, two-tier or GPU "
                "storage)");
  }
  // The entries whose score is >= threshold in that format,  // The entries whose score is >= threshold in that format, taken into memory with the threshold
  // of the next such dump (kv::DumpImage; kv/table_file.hpp's incremental dumps): an online-training
  // run's dumps (lib/run/online_dumps.hpp). An Error for a store without one scored table (static
  // storage; the two tiers, whose scores are not on one clock).
  virtual kv::DumpImage dump_incremental_image(std::uint64_t threshold) const {
    (void)threshold;
    throw Error("an incremental dump: this store has no single scored table (static or two-tier storage)");
  }
  // After restore_entries: later calls score on from `score_now` (kv::KvTable::continue_scores).
  // Nothing for a store without one table.
  virtual void continue_scores(std::uint64_t score_now) { (void)score_now; }
  // Entries read from such a dump: `rows` keys.size() x the table's row width (values, then the
  // optimizer's state), restored with exactly their `scores`. An Error for a store without a table.
  virtual kv::CallStats restore_entries(std::span<const Key> keys, std::span<const float> rows,
                                        std::span<const std::uint64_t> scores) {
    (void)rows;
    (void)scores;
    throw Error("restoring " + std::to_string(keys.size()) + " entries: this store has no table (static storage)");
  }
};

}  // namespace embscale::embedding
