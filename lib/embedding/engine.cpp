#include "embedding/engine.hpp"

#include <algorithm>
#include <filesystem>

#include "comm/failure.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "device/device_phase_clock.hpp"
#include "embedding/device_batch.hpp"
#include "embedding/device_kv_row_store.hpp"
#include "embedding/device_static_row_store.hpp"
#include "embedding/device_step_family.hpp"
#include "embedding/kv_row_store.hpp"
#include "embedding/memory_need.hpp"
#include "embedding/regression_objective.hpp"
#include "embedding/static_row_store.hpp"
#include "embedding/tiered_row_store.hpp"

namespace embscale::embedding {

std::uint64_t table_seed(std::uint64_t solver_seed, std::size_t layer_index) {
  return hash_combine(hash_combine(solver_seed, 0x7ab1e5eedULL), layer_index);
}

std::int64_t LayerSpec::vocabulary() const noexcept {
  std::int64_t v = 0;
  for (const auto s : slot_sizes) v += s;
  return v;
}

std::int32_t LayerSpec::slot_of(Key key) const noexcept {
  const auto it = std::upper_bound(slot_offsets.begin(), slot_offsets.end(), key);
  return static_cast<std::int32_t>(it - slot_offsets.begin()) - 1;
}

OwnedKeys LayerSpec::keys_modulo_ranks() const {
  const int rank = comm->rank(), ranks = comm->size();
  OwnedKeys owned;
  for (std::size_t s = 0; s < slot_sizes.size(); ++s) {
    const Key first = slot_offsets[s];
    owned.add(first + ((rank - first % ranks) % ranks + ranks) % ranks, first + slot_sizes[s], ranks);
  }
  return owned;
}

std::int64_t most_rows_modulo(const LayerSpec& spec, int ranks) {
  std::int64_t most = 0;
  for (int rank = 0; rank < ranks; ++rank) {
    std::int64_t rows = 0;
    for (std::size_t s = 0; s < spec.slot_sizes.size(); ++s) {
      // keys k of [first, first + size) with k % ranks == rank: size / ranks, one more for the
      // first size % ranks residues counted from first's.
      const Key first = spec.slot_offsets[s], size = spec.slot_sizes[s];
      const Key distance = ((rank - first % ranks) % ranks + ranks) % ranks;
      rows += size / ranks + (distance < size % ranks ? 1 : 0);
    }
    most = std::max(most, rows);
  }
  return most;
}

std::int64_t every_row(const LayerSpec& spec, int) { return spec.vocabulary(); }

OwnedKeys LayerSpec::all_keys() const {
  OwnedKeys owned;
  for (std::size_t s = 0; s < slot_sizes.size(); ++s) owned.add(slot_offsets[s], slot_offsets[s] + slot_sizes[s]);
  return owned;
}

namespace {

// The KV table options of a layer's store of rows `width` wide.
kv::TableOptions table_options(const LayerSpec& spec, std::int32_t width) {
  kv::TableOptions options = spec.config->storage.table;
  options.dim = width;
  options.training = spec.optimizer != nullptr;
  options.optimizer_state_width = spec.optimizer ? spec.optimizer->state_width() : 0;
  options.seed = spec.table_seed;
  options.num_embeddings = spec.vocabulary();
  if (spec.optimizer) {  // the row initializer writes the optimizer's initial state
    options.initializer.initial_state.assign(static_cast<std::size_t>(spec.optimizer->state_width()), 0.0f);
    spec.optimizer->init_state(options.initializer.initial_state);
  }
  return options;
}

// A dynamic layer's storage options, checked as its stores would be made (any number of ranks).
void check_dynamic_storage(const LayerSpec& spec, const kv::TableOptions& options) {
  try {
    kv::check_options(options);
  } catch (const InputError& e) {
    throw InputError(spec.path + ".storage: " + e.what());
  }
  const auto& storage = spec.config->storage;
  const bool tiered = storage.two_tier();
  if (tiered && spec.optimizer && spec.optimizer->update_type() == UpdateType::kGlobal &&
      spec.optimizer->changes_untouched_rows())
    throw InputError(spec.path + ".optimizer.update_type: Global " + spec.optimizer->name() +
                     " moves every row each step, "
                     "which the two-tier tables (storage.global_hbm_for_values) cannot sweep; use Local or LazyGlobal");
  if (spec.config->device != config::Device::kGpu) return;
  // The GPU's table (DeviceKvRowStore) stores float32 rows.
  if (options.value_type != kv::ValueType::kFloat32)
    throw InputError(spec.path + ".storage.embedding_dtype: the GPU's dynamic table stores fp32 rows; got " +
                     (options.value_type == kv::ValueType::kFloat16 ? "fp16" : "bf16") +
                     " (fp16 and bf16 rows run on the GPU with static storage)");
}

// Static storage: the fullest rank's `most` rows must fit max_vocabulary_size_per_gpu.
void check_static_rows(const LayerSpec& spec, std::int64_t most, int ranks) {
  if (most > spec.config->max_vocabulary_size_per_gpu)
    throw InputError(spec.path + ".sparse_embedding_hparam.max_vocabulary_size_per_gpu: expected at least " +
                     std::to_string(most) + " (the most rows one rank holds of the layer's " +
                     std::to_string(spec.vocabulary()) + " over " + std::to_string(ranks) + " ranks), got " +
                     std::to_string(spec.config->max_vocabulary_size_per_gpu));
}

}  // namespace

std::unique_ptr<RowStore> LayerSpec::make_store(const OwnedKeys& owned, std::int32_t width, std::int32_t column_first,
                                                const RowMemory& memory) const {
  kv::TableOptions options = table_options(*this, width);
  if (!config->storage.dynamic) {
    // check_layers_for_ranks checked the placement's rows before the run; on the hosts' nodes
    // (table_row_wise without ranks_per_node) they are known only now. Collective (every rank
    // makes its stores at the same point): the same verdict on all ranks.
    check_static_rows(*this, comm->allreduce(owned.rows(), comm::ReduceOp::kMax), comm->size());
    if (!context.on_host()) {
      EMBSCALE_EXPECTS(device_library != nullptr && !memory, "a device layer has its library and its own memory");
      // The GPU's memory may fail one rank only (ranks sharing a GPU, the large tables on a few):
      // every rank learns it here, before any rank goes on to a collective the others miss.
      std::unique_ptr<RowStore> store;
      comm::all_or_none(comm->host_communicator(), [&] {
        store = std::make_unique<DeviceStaticRowStore>(owned, options, column_first, dim(), context, *device_library);
      });
      return store;
    }
    return std::make_unique<StaticRowStore>(owned, options, column_first, dim(), context, memory);
  }
  check_dynamic_storage(*this, options);
  const auto& storage = config->storage;
  if (!context.on_host()) {  // check_device_path refused the two tiers on a GPU before the run
    EMBSCALE_EXPECTS(device_library != nullptr, "a device layer has its library");
    std::unique_ptr<RowStore> store;
    comm::all_or_none(comm->host_communicator(), [&] {
      store = std::make_unique<DeviceKvRowStore>(options, path + ".storage", context, *device_library);
    });
    return store;
  }
  // The dynamic tables' calls stay on the caller's thread: the context's threads are the
  // pooling's and the static update's (EngineOptions::threads), not the table's.
  ExecutionContext table_context = context;
  table_context.threads = 1;
  if (!storage.two_tier()) return std::make_unique<KvRowStore>(options, path + ".storage", table_context);
  TierOptions tiers{storage.caching, storage.global_hbm_for_values, storage.slow_directory};
  if (tiers.slow_directory.empty()) tiers.slow_directory = std::filesystem::temp_directory_path().string();
  return make_tiered_row_store(options, tiers, path + ".storage", table_context);
}

Batch select_slots(const Batch& batch, std::span<const std::int32_t> slots) {
  Batch out;
  out.first_sample = batch.first_sample;
  out.num_samples = batch.num_samples;
  out.num_slots = static_cast<std::int32_t>(slots.size());
  out.label_dim = batch.label_dim;
  out.dense_dim = batch.dense_dim;
  out.labels = batch.labels;
  out.offsets.reserve(static_cast<std::size_t>(batch.num_samples) * slots.size() + 1);
  for (std::int64_t s = 0; s < batch.num_samples; ++s)
    for (const auto slot : slots) {
      const auto bag = batch.bag(s * batch.num_slots + slot);
      out.keys.insert(out.keys.end(), bag.begin(), bag.end());
      out.offsets.push_back(static_cast<std::int64_t>(out.keys.size()));
    }
  return out;
}

struct EmbeddingEngine::Layer {
  LayerSpec spec;
  const SchemeEntry* entry = nullptr;
  std::unique_ptr<SparseOptimizer> optimizer;
  std::unique_ptr<EmbeddingScheme> scheme;
  std::string prefix;
  bool all_slots = true;
  std::vector<float> pooled, grad;
  // A device layer's: its batch, pooled output and gradient on the device, and the per-sample
  // losses of the stand-in regression (summed on the host in sample order).
  std::unique_ptr<DeviceBatch> device_batch;
  std::unique_ptr<device::GrowingDeviceBuffer> device_pooled, device_grad, device_loss;
  std::vector<double> sample_loss;
  std::size_t pooled_size = 0;  // floats of the last step's device output

  bool on_device() const noexcept { return device_batch != nullptr; }

  // The stand-in regression on the device (regression_objective.hpp's, per sample in a kernel);
  // the per-sample losses come back and are summed in sample order, as the host sums them.
  double device_regression(const Batch& input, std::span<const float> values, std::span<float> gradient,
                           std::int64_t global_batch) {
    EMBSCALE_EXPECTS(input.label_dim >= 1, "the regression objective needs a label");
    const auto& library = *spec.device_library;
    const auto samples = static_cast<std::size_t>(input.num_samples);
    const double inv_batch = 1.0 / static_cast<double>(global_batch);
    auto* losses = device_loss->reserve_for<double>(samples);
    library.check(embedding_step_family(library).embedding_step_regression(
                      values.data(), device_batch->labels(), static_cast<std::uint64_t>(input.label_dim), samples,
                      static_cast<std::uint64_t>(input.num_slots) * static_cast<std::uint64_t>(spec.dim()), inv_batch,
                      losses, gradient.data(), spec.context.stream),
                  "embedding_step regression");
    sample_loss.resize(samples);
    library.check(
        library.functions().copy_async(sample_loss.data(), losses, static_cast<std::int64_t>(samples * sizeof(double)),
                                       spec.context.stream),
        "reading the losses");
    library.check(library.functions().stream_synchronize(spec.context.stream), "reading the losses");
    double loss = 0.0;
    for (const double l : sample_loss) loss += l;
    return loss * inv_batch;
  }
};

LayerSpec make_layer_spec(comm::Communicator* comm, const config::Config& config, std::size_t i,
                          std::span<const std::int64_t> slot_sizes) {
  const auto& layer = config.embeddings[i];
  LayerSpec spec;
  spec.comm = comm;
  spec.config = &layer;
  spec.path = "layers[" + layer.name + "]";
  // No key spaces (a Norm file without slot_size_array): every slot's size and offset are 0, the
  // keys whatever the data holds (dynamic storage only: config::DataLayer::key_spaces_known).
  spec.key_spaces_known = !slot_sizes.empty();
  const std::size_t slots = spec.key_spaces_known ? slot_sizes.size() : static_cast<std::size_t>(config.data.slot_num);
  std::vector<Key> offsets(slots + 1, 0);
  for (std::size_t s = 0; s < slot_sizes.size(); ++s) offsets[s + 1] = offsets[s] + slot_sizes[s];
  for (const auto slot : layer.slots) {
    if (static_cast<std::size_t>(slot) >= slots)
      throw InputError(spec.path + ".slots: slot " + std::to_string(slot) + " is beyond the data's " +
                       std::to_string(slots) + " slots");
    spec.slot_sizes.push_back(spec.key_spaces_known ? slot_sizes[static_cast<std::size_t>(slot)] : 0);
    spec.slot_offsets.push_back(offsets[static_cast<std::size_t>(slot)]);
  }
  spec.global_batch = config.solver.batchsize;
  spec.table_seed = table_seed(config.solver.seed, i);
  return spec;
}

namespace {

// A GPU layer needs a scheme with a GPU step and storage that has one (the two-tier table keeps
// its slow tier on the host's disk and has none).
void check_device_path(const LayerSpec& spec, const SchemeEntry& entry) {
  if (!entry.runs_on_device) {
    const std::string with = scheme_names_where([](const SchemeEntry& e) { return e.runs_on_device; });
    throw InputError(spec.path + ".device: \"gpu\": " + entry.name + " has no GPU step in this build (" +
                     (with.empty() ? "no scheme has one yet" : "the schemes with one: " + with) +
                     "); run the layer on the host");
  }
  const auto& storage = spec.config->storage;
  if (storage.two_tier())
    throw InputError(spec.path + ".storage: the two-tier table (" +
                     (storage.caching ? std::string("caching") : std::string("global_hbm_for_values")) +
                     ") has no GPU path in this build; run the layer on the host, or without the two tiers");
  if (!spec.config->deduplicate)
    throw InputError(spec.path +
                     ".deduplicate: false has no GPU path (the GPU step always de-duplicates); run the "
                     "layer on the host to measure what de-duplication saves");
}

// Fields a scheme would ignore are refused, so that a config says what it runs.
void check_scheme_fields(const LayerSpec& spec, const SchemeEntry& entry) {
  const auto& layer = *spec.config;
  if (layer.ranks_per_node > 0 && !entry.places_ranks_in_nodes)
    throw InputError(spec.path + ".ranks_per_node: only " +
                     scheme_names_where([](const SchemeEntry& e) { return e.places_ranks_in_nodes; }) +
                     " places ranks in nodes; this layer's scheme is " + entry.name);
  if (!layer.deduplicate && !entry.dedups_before_exchange)
    throw InputError(spec.path + ".deduplicate: " + entry.name +
                     " sends (key, bag) pairs, which cannot be "
                     "de-duplicated before the exchange (its owners de-duplicate before the lookup); only " +
                     scheme_names_where([](const SchemeEntry& e) { return e.dedups_before_exchange; }) +
                     " can switch it off");
  if (layer.device == config::Device::kGpu) check_device_path(spec, entry);
}

}  // namespace

void check_layers(const config::Config& config, std::span<const std::int64_t> slot_sizes) {
  for (std::size_t i = 0; i < config.embeddings.size(); ++i) {
    // Planned layers get their scheme before a run; a parameter server's table is not the engine's.
    const auto& sharding = config.embeddings[i].sharding;
    if (config::is_auto_sharding(sharding) || sharding == config::kParameterServerSharding) continue;
    LayerSpec spec = make_layer_spec(nullptr, config, i, slot_sizes);  // the checks need no communicator
    const auto& entry = scheme_of(config.embeddings[i]);
    check_scheme_fields(spec, entry);
    if (!spec.key_spaces_known && entry.splits_key_spaces)
      throw InputError(spec.path + ": " + entry.name + " splits each slot's key space in row blocks, which " +
                       "layers[" + config.data.name + "] does not give: add its slot_size_array, or use a scheme " +
                       "that places keys by hash or by slot");
    if (!config.embeddings[i].storage.dynamic) continue;
    std::unique_ptr<SparseOptimizer> optimizer;
    if (config.embeddings[i].storage.table.training)
      optimizer = make_sparse_optimizer(config.embeddings[i].optimizer, spec.dim());
    spec.optimizer = optimizer.get();
    check_dynamic_storage(spec, table_options(spec, spec.dim()));
  }
}

void check_layers_for_ranks(const config::Config& config, std::span<const std::int64_t> slot_sizes, int ranks) {
  check_layers(config, slot_sizes);
  for (std::size_t i = 0; i < config.embeddings.size(); ++i) {
    const LayerSpec spec = make_layer_spec(nullptr, config, i, slot_sizes);
    const auto& entry = scheme_of(config.embeddings[i]);
    if (entry.check) entry.check(spec, ranks);
    if (config.embeddings[i].storage.dynamic) continue;
    const auto rows = static_rows_per_rank(spec, entry, ranks);
    check_static_rows(spec, *std::max_element(rows.begin(), rows.end()), ranks);
  }
}

EmbeddingEngine::EmbeddingEngine(comm::Communicator& comm, const config::Config& config,
                                 std::span<const std::int64_t> slot_sizes, EngineOptions options)
    : comm_(comm), global_batch_(config.solver.batchsize), options_(options) {
  EMBSCALE_EXPECTS(options.threads >= 1, "the engine needs at least one thread");
  check_layers_for_ranks(config, slot_sizes, comm.size());
  for (std::size_t i = 0; i < config.embeddings.size(); ++i) {
    auto layer = std::make_unique<Layer>();
    layer->spec = make_layer_spec(&comm, config, i, slot_sizes);
    layer->spec.context = ExecutionContext::host(options.threads);
    if (config.embeddings[i].device == config::Device::kGpu) {
      if (options.device_library == nullptr || options.device_context.on_host())
        throw Error(layer->spec.path + ".device: \"gpu\", and the engine was given no GPU (EngineOptions)");
      // Its exchanges pass device buffers: the communicator must take them (NCCL, or staged MPI).
      EMBSCALE_EXPECTS(comm.memory_space() == MemorySpace::kDevice,
                       "a GPU layer's communicator takes device memory (comm::NcclCommunicator, StagedCommunicator)");
      const auto& library = *options.device_library;
      layer->spec.context = options.device_context;
      layer->spec.device_library = &library;
      layer->device_batch = std::make_unique<DeviceBatch>(library, options.device_context);
      layer->spec.device_batch = layer->device_batch.get();
      layer->device_pooled = std::make_unique<device::GrowingDeviceBuffer>(library);
      layer->device_grad = std::make_unique<device::GrowingDeviceBuffer>(library);
      layer->device_loss = std::make_unique<device::GrowingDeviceBuffer>(library);
    }
    layer->entry = &scheme_of(config.embeddings[i]);
    if (config.embeddings[i].storage.table.training)
      layer->optimizer = make_sparse_optimizer(config.embeddings[i].optimizer, layer->spec.dim());
    layer->spec.optimizer = layer->optimizer.get();
    layer->prefix = config.embeddings.size() > 1 ? config.embeddings[i].name + "." : "";
    layer->all_slots = layer->spec.slots() == static_cast<std::int32_t>(slot_sizes.size());
    layer->scheme = layer->entry->make(layer->spec);
    layers_.push_back(std::move(layer));
  }
}

EmbeddingEngine::~EmbeddingEngine() = default;

std::vector<Batch> EmbeddingEngine::slot_subsets(const Batch& batch) const {
  std::vector<Batch> subsets(layers_.size());
  for (std::size_t i = 0; i < layers_.size(); ++i)
    if (!layers_[i]->all_slots) subsets[i] = select_slots(batch, layers_[i]->spec.config->slots);
  return subsets;
}

void EmbeddingEngine::drive_score_clocks() {
  for (const auto& layer : layers_) {
    const config::EmbeddingStorage& storage = layer->spec.config->storage;
    if (!storage.dynamic) continue;
    const bool epochs = storage.epoch_steps > 0;
    const bool custom = storage.custom_score_step && storage.table.score_strategy == kv::ScoreStrategy::kCustomized;
    if (!epochs && !custom) continue;
    const auto epoch = epochs ? static_cast<std::uint32_t>((steps_ - 1) / storage.epoch_steps) : 0u;
    layer->scheme->store().set_score_clock(epoch, custom ? static_cast<std::uint64_t>(steps_) : 0);
  }
}

double EmbeddingEngine::step(const Batch& batch, StepRecorder& recorder) {
  const std::vector<Batch> subsets = slot_subsets(batch);
  // A device layer's input goes to the GPU before the clock starts (the data reader's work).
  for (std::size_t i = 0; i < layers_.size(); ++i)
    if (layers_[i]->on_device()) layers_[i]->device_batch->upload(layers_[i]->all_slots ? batch : subsets[i]);
  ++steps_;
  drive_score_clocks();
  recorder.begin_step();
  const auto input_of = [&](std::size_t i) -> const Batch& { return layers_[i]->all_slots ? batch : subsets[i]; };
  double loss = 0.0;
  if (model_objective_) {
    std::vector<std::span<const float>> pooled(layers_.size());
    std::vector<std::span<float>> grads(layers_.size());
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      Layer& layer = *layers_[i];
      const auto n = static_cast<std::size_t>(input_of(i).num_bags()) * static_cast<std::size_t>(layer.spec.dim());
      layer.pooled.resize(n);
      layer.grad.resize(n);
      recorder.begin_layer(layer.prefix, layer.scheme->phases(), layer.scheme->communicators());
      layer.scheme->forward(input_of(i), layer.pooled, recorder);
      pooled[i] = layer.pooled;
      grads[i] = layer.grad;
    }
    loss = model_objective_(batch, pooled, grads, recorder);
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      Layer& layer = *layers_[i];
      if (layer.optimizer) {
        recorder.begin_layer(layer.prefix, layer.scheme->phases(), layer.scheme->communicators());
        layer.scheme->backward(input_of(i), layer.grad, steps_, recorder);
      }
      record_store_counters(layer, recorder);
    }
    recorder.end_step();
    return loss;
  }
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    Layer& layer = *layers_[i];
    const Batch& input = input_of(i);
    const auto n = static_cast<std::size_t>(input.num_bags()) * static_cast<std::size_t>(layer.spec.dim());
    std::span<float> pooled, grad;
    if (layer.on_device()) {
      layer.pooled_size = n;
      pooled = std::span<float>(layer.device_pooled->reserve_for<float>(n), n);
      grad = std::span<float>(layer.device_grad->reserve_for<float>(n), n);
    } else {
      layer.pooled.resize(n);
      layer.grad.resize(n);
      pooled = layer.pooled;
      grad = layer.grad;
    }
    recorder.begin_layer(layer.prefix, layer.scheme->phases(), layer.scheme->communicators());
    layer.scheme->forward(input, pooled, recorder);
    recorder.begin_layer(layer.prefix, std::span<const PhaseDefinition>(&kLossPhase, 1), {});
    loss += layer.on_device() ? layer.device_regression(input, pooled, grad, global_batch_)
                              : regression_loss_and_gradient(input, pooled, layer.spec.dim(), global_batch_, grad);
    recorder.lap(kLossPhase.name);
    if (layer.optimizer) {
      recorder.begin_layer(layer.prefix, layer.scheme->phases(), layer.scheme->communicators());
      layer.scheme->backward(input, grad, steps_, recorder);
    }
    record_store_counters(layer, recorder);
  }
  recorder.end_step();
  return loss;
}

void EmbeddingEngine::record_store_counters(Layer& layer, StepRecorder& recorder) {
  const StoreCounters c = layer.scheme->store().take_counters();
  recorder.count("hits", c.hits);
  recorder.count("misses", c.misses);
  recorder.count("inserts", c.inserts);
  recorder.count("evictions", c.evictions);
  recorder.count("refused", c.refused);
  recorder.count("not_admitted", c.not_admitted);
  if (layer.spec.config->storage.two_tier()) recorder.count("fast_tier_misses", c.fast_tier_misses);
  recorder.count("table_size", layer.scheme->store().size());
}

void EmbeddingEngine::evaluate(const Batch& batch, StepRecorder& recorder) {
  for (const auto& layer : layers_)
    EMBSCALE_EXPECTS(!layer->on_device(), "evaluation runs host layers (the dense model's)");
  const std::vector<Batch> subsets = slot_subsets(batch);
  recorder.begin_step();
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    Layer& layer = *layers_[i];
    const Batch& input = layer.all_slots ? batch : subsets[i];
    layer.pooled.resize(static_cast<std::size_t>(input.num_bags()) * static_cast<std::size_t>(layer.spec.dim()));
    RowStore& store = layer.scheme->store();
    store.set_evaluating(true);
    recorder.begin_layer(layer.prefix, layer.scheme->phases(), layer.scheme->communicators());
    layer.scheme->forward(input, layer.pooled, recorder);
    store.set_evaluating(false);
    (void)store.take_counters();  // a training step's counters are its own
  }
  recorder.end_step();
}

void EmbeddingEngine::set_model_objective(ModelObjective objective) {
  for (const auto& layer : layers_)
    EMBSCALE_EXPECTS(!layer->on_device(), "a model objective reads every layer's output in host memory");
  model_objective_ = std::move(objective);
}

const LayerSpec& EmbeddingEngine::spec(std::size_t layer) const { return layers_.at(layer)->spec; }
const SchemeEntry& EmbeddingEngine::entry(std::size_t layer) const { return *layers_.at(layer)->entry; }
const EmbeddingScheme& EmbeddingEngine::scheme(std::size_t layer) const { return *layers_.at(layer)->scheme; }
RowStore& EmbeddingEngine::store(std::size_t layer) { return layers_.at(layer)->scheme->store(); }
std::span<const float> EmbeddingEngine::pooled(std::size_t layer) const {
  const Layer& l = *layers_.at(layer);
  if (!l.on_device()) return l.pooled;
  return std::span<const float>(static_cast<const float*>(l.device_pooled->data()), l.pooled_size);
}

std::vector<float> EmbeddingEngine::pooled_on_host(std::size_t layer) const {
  const Layer& l = *layers_.at(layer);
  if (!l.on_device()) return l.pooled;
  std::vector<float> out(l.pooled_size);
  const auto& library = *l.spec.device_library;
  library.check(
      library.functions().copy_async(out.data(), l.device_pooled->data(),
                                     static_cast<std::int64_t>(out.size() * sizeof(float)), l.spec.context.stream),
      "reading the pooled output");
  library.check(library.functions().stream_synchronize(l.spec.context.stream), "reading the pooled output");
  return out;
}

std::unique_ptr<PhaseClock> EmbeddingEngine::make_phase_clock() const {
  for (const auto& layer : layers_)
    if (layer->on_device())
      return std::make_unique<device::DevicePhaseClock>(*layer->spec.device_library, layer->spec.context);
  return std::make_unique<HostPhaseClock>();
}

const std::string& EmbeddingEngine::prefix(std::size_t layer) const { return layers_.at(layer)->prefix; }

}  // namespace embscale::embedding
