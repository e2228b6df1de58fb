// EmbeddingScheme: the plug-in the layer engine (engine.hpp) runs. A scheme says how a layer's
// keys are routed, which collectives move keys, rows, pooled vectors and gradients, where
// pooling happens, and its own phases. It owns this rank's rows (RowStore: static or dynamic,
// as LayerSpec::make_store decides) and never constructs a batch: the engine hands it the
// layer's share of each step's batch.
//
// Contract of one step, on every rank of the layer's communicator:
//   forward(batch, pooled)           pooled: [batch.num_bags() x dim], bag b = sample * slots + slot
//                                    combined by the layer's combiner (sum or mean)
//   backward(batch, grad, step)      grad: dLoss/dpooled of the same batch; the rows are updated
//                                    by the layer's optimizer (step: 1-based global iteration)
// Results must not depend on the number of ranks beyond float rounding: the reference model
// (tests/embedding/reference_model.hpp) checks every scheme against one process.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "core/batch.hpp"
#include "device/device_library.hpp"
#include "embedding/owned_keys.hpp"
#include "embedding/row_store.hpp"
#include "embedding/sparse_optimizer.hpp"
#include "embedding/step_recorder.hpp"

namespace embscale::embedding {

class DeviceBatch;

// What a scheme is built from: the layer's config and its place in the key space.
struct LayerSpec {
  comm::Communicator* comm = nullptr;
  const config::EmbeddingLayer* config = nullptr;
  std::string path;                      // "layers[emb1]", for messages
  std::vector<std::int64_t> slot_sizes;  // of the layer's slots, in order
  std::vector<Key> slot_offsets;         // first unified key of each of the layer's slots
  // False when the data gives no slot_size_array (a Norm file): sizes and offsets are 0, the keys
  // whatever the data holds, the storage dynamic (config::DataLayer::key_spaces_known).
  bool key_spaces_known = true;
  std::int64_t global_batch = 0;               // samples per step over all ranks
  std::uint64_t table_seed = 0;                // of the rows' initializer
  const SparseOptimizer* optimizer = nullptr;  // null in evaluation mode (storage.training false)
  // Where this rank's part of the layer runs, drawn once for the layer: its stores' calls and its
  // pooling take it (host: the OpenMP threads of pooling and the static-table update,
  // EngineOptions::threads; core/execution_context.hpp).
  ExecutionContext context;
  // A device layer's: the library its kernels are called through, and the engine's device copy of
  // the batch its next forward and backward are handed (refreshed before every step). Null on
  // the host.
  const device::DeviceLibrary* device_library = nullptr;
  const DeviceBatch* device_batch = nullptr;

  std::int32_t dim() const noexcept { return config->embedding_vec_size; }
  std::int32_t slots() const noexcept { return static_cast<std::int32_t>(slot_sizes.size()); }
  std::int64_t vocabulary() const noexcept;  // keys of the layer's slots
  bool training() const noexcept { return optimizer != nullptr; }
  bool mean() const noexcept { return config->combiner == config::Combiner::kMean; }
  // The layer slot (0-based, in this layer) of a unified key of the layer.
  std::int32_t slot_of(Key key) const noexcept;
  // The keys of the layer this rank owns under `key % ranks`, and all of the layer's keys.
  OwnedKeys keys_modulo_ranks() const;
  OwnedKeys all_keys() const;

  // The storage of the rows this rank owns: static over `owned` (its row count checked against
  // max_vocabulary_size_per_gpu), or the KV table when the layer's storage is dynamic (`owned`
  // then only sizes nothing: keys are inserted as they come). `dim` is the stored width (a
  // column-wise shard stores fewer values than the layer's dim: columns [column_first,
  // column_first + dim) of the layer's rows, initialised as those columns of the full rows).
  // `memory`: where a static host store keeps its rows (unset: its own memory; static_row_store.hpp).
  std::unique_ptr<RowStore> make_store(const OwnedKeys& owned, std::int32_t dim, std::int32_t column_first = 0,
                                       const RowMemory& memory = {}) const;
};

// SchemeEntry::most_rows of two placements: unified key % ranks, and every row on every rank
// (whole or a slice of its columns).
std::int64_t most_rows_modulo(const LayerSpec& spec, int ranks);
std::int64_t every_row(const LayerSpec& spec, int ranks);

// hot_replicated's hot rows of each of the layer's slots: its `hot_rows`, else the first 1 % of
// each slot's rows, rounded up (under a power law about that share of the rows draws most of the
// lookups, FlexShard's observation; `embscale plan` chooses them per slot from its costs).
inline constexpr std::int64_t kRowsPerDefaultHotRow = 100;
std::vector<std::int64_t> hot_rows_of(const LayerSpec& spec);

class EmbeddingScheme {
 public:
  virtual ~EmbeddingScheme() = default;

  // In execution order.
  virtual std::span<const PhaseDefinition> phases() const noexcept = 0;
  // The communicators whose traffic the phases count (the layer's, and any the scheme split).
  virtual std::vector<const comm::Communicator*> communicators() const = 0;

  virtual void forward(const Batch& batch, std::span<float> pooled, StepRecorder& recorder) = 0;
  virtual void backward(const Batch& batch, std::span<const float> grad_pooled, std::int64_t step,
                        StepRecorder& recorder) = 0;

  // This rank's rows (for the table counters, tests and the reference comparison).
  virtual const RowStore& store() const = 0;
  virtual RowStore& store() = 0;
};

// Every scheme runs on any number of ranks unless its registry entry says otherwise
// (scheme_registry.hpp).
using SchemeFactory = std::unique_ptr<EmbeddingScheme> (*)(const LayerSpec& spec);

}  // namespace embscale::embedding
