// Hot-row replication (FlexShard's replicated hot rows; RecShard's per-row placement): the
// `hot_rows` first rows of each slot's key space are replicated on every rank, the rest of the
// keys live on rank key % ranks as under distributed_slot. A key's rank in its slot's key space
// is taken as its popularity rank: ids ranked by frequency, as FAE and FlexShard preprocess them
// and as the synthetic generators' identity mapping draws them (the planner sees the mapping and
// predicts what a hot prefix holds either way).
//
// Forward: each bag's cold keys take distributed_slot's path (to their owners, pooled there,
// reduce-scattered back); its hot keys are read from this rank's replica and pooled here, with
// no exchange. Backward: the cold keys' gradients go back as under distributed_slot; the hot
// rows' gradients (a dense [hot rows x dim] buffer) and their touch counts are summed over ranks
// by an allreduce, and every rank applies the same update to the hot rows any rank touched (in one
// update call with its cold rows under the Global update type, whose untouched rows must be
// updated once a step).
//
// Invariant: every rank holds every hot row with the same values and optimizer state (the same
// initial rows, then the same summed gradients applied in the same order).
#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "embedding/key_router.hpp"
#include "embedding/pooled_exchange.hpp"
#include "embedding/pooling.hpp"
#include "embedding/scheme.hpp"
#include "embedding/scheme_registry.hpp"

namespace embscale::embedding {
namespace {

constexpr PhaseDefinition kHotRoute{"hot_route", "split each bag into hot and cold keys; de-duplicate the hot ones"};
constexpr PhaseDefinition kHotLookup{"hot_lookup", "read the hot keys' rows from this rank's replica"};
constexpr PhaseDefinition kHotPool{"hot_pool", "add each bag's hot rows to its pooled vector; mean: divide"};
constexpr PhaseDefinition kHotPoolBackward{"hot_pool_backward",
                                           "each hot key's gradient summed over this rank's bags, into the hot "
                                           "rows' dense gradient"};
constexpr PhaseDefinition kAllreduceHot{"allreduce_hot_grads", "sum the hot rows' gradient and touch counts over ranks",
                                        "allreduce"};
constexpr PhaseDefinition kUpdateAll{"update", "the optimizer on this rank's cold rows and the touched hot rows"};

// distributed_slot's phases with the hot path's in execution order: the hot forward after the
// cold one's unpack, the hot backward after the cold pool_backward, one update last.
const std::vector<PhaseDefinition>& hot_replicated_phases() {
  static const std::vector<PhaseDefinition> phases = [] {
    std::vector<PhaseDefinition> out;
    for (const auto& phase : pooled_phases(PooledOutput::kReduceScatter)) {
      const std::string name = phase.name;
      if (name == "update") continue;
      out.push_back(phase);
      if (name == "unpack") out.insert(out.end(), {kHotRoute, kHotLookup, kHotPool});
      if (name == "pool_backward") out.insert(out.end(), {kHotPoolBackward, kAllreduceHot});
    }
    out.push_back(kUpdateAll);
    return out;
  }();
  return phases;
}

// Every slot's hot prefix, held by every rank.
OwnedKeys hot_keys(const LayerSpec& spec, const std::vector<std::int64_t>& hot) {
  OwnedKeys owned;
  for (std::size_t s = 0; s < hot.size(); ++s) owned.add(spec.slot_offsets[s], spec.slot_offsets[s] + hot[s]);
  return owned;
}

// The layer's rows on this rank as one store, for the table counters, tests and the reference
// comparison: the hot replica, and the cold store less its copies of the hot keys. The cold store
// holds every key = rank (mod ranks), as distributed_slot's does (one strided range: a division
// per lookup where the keys without the hot ones would be two ranges a slot, a search per lookup);
// its copies of hot keys are never read (the hot keys do not reach the exchange) and are not
// shown.
class HotAndColdRows final : public RowStore {
 public:
  HotAndColdRows(std::unique_ptr<RowStore> hot, std::unique_ptr<RowStore> cold, std::function<bool(Key)> is_hot)
      : hot_(std::move(hot)), cold_(std::move(cold)), is_hot_(std::move(is_hot)) {}

  RowStore& hot() noexcept { return *hot_; }
  RowStore& cold() noexcept { return *cold_; }

  std::int32_t dim() const noexcept override { return hot_->dim(); }
  std::int32_t state_width() const noexcept override { return hot_->state_width(); }
  ExecutionContext execution_context() const override { return hot_->execution_context(); }
  // Rows allocated: the replica and the whole cold store (its idle hot copies included).
  std::int64_t size() const override { return hot_->size() + cold_->size(); }
  void read(std::span<const Key> keys, std::span<float> rows) override {
    const auto dim = static_cast<std::size_t>(this->dim());
    split(keys);
    for (int part = 0; part < 2; ++part) {
      part_rows_[part].resize(part_keys_[part].size() * dim);
      (part == 0 ? *hot_ : *cold_).read(part_keys_[part], part_rows_[part]);
      for (std::size_t j = 0; j < part_at_[part].size(); ++j)
        std::copy_n(part_rows_[part].begin() + static_cast<std::ptrdiff_t>(j * dim), dim,
                    rows.begin() + static_cast<std::ptrdiff_t>(part_at_[part][j] * dim));
    }
  }
  void apply(std::span<const Key> keys, std::span<const float> grads, const SparseOptimizer& optimizer,
             std::int64_t step) override {
    const auto dim = static_cast<std::size_t>(this->dim());
    split(keys);
    for (int part = 0; part < 2; ++part) {
      part_rows_[part].clear();
      for (const auto i : part_at_[part])
        part_rows_[part].insert(part_rows_[part].end(), grads.begin() + static_cast<std::ptrdiff_t>(i * dim),
                                grads.begin() + static_cast<std::ptrdiff_t>((i + 1) * dim));
      (part == 0 ? *hot_ : *cold_).apply(part_keys_[part], part_rows_[part], optimizer, step);
    }
  }
  bool row(Key key, std::span<float> out) const override {
    return is_hot_(key) ? hot_->row(key, out) : cold_->row(key, out);
  }
  void for_each_row(const std::function<void(Key, std::span<const float>)>& visit) const override {
    hot_->for_each_row(visit);
    cold_->for_each_row([&](Key key, std::span<const float> values) {
      if (!is_hot_(key)) visit(key, values);
    });
  }
  StoreCounters take_counters() override {
    StoreCounters sum = hot_->take_counters();
    const StoreCounters cold = cold_->take_counters();
    sum.hits += cold.hits;
    sum.misses += cold.misses;
    sum.inserts += cold.inserts;
    sum.evictions += cold.evictions;
    sum.refused += cold.refused;
    sum.not_admitted += cold.not_admitted;
    sum.fast_tier_misses += cold.fast_tier_misses;
    return sum;
  }
  // Both parts, each in a file of its own (".hot.kv", ".cold.kv"), the replica's clocks first.
  std::vector<TableClock> save_checkpoint(const std::filesystem::path& stem) const override {
    auto clocks = hot_->save_checkpoint(stem.string() + ".hot");
    const auto cold = cold_->save_checkpoint(stem.string() + ".cold");
    clocks.insert(clocks.end(), cold.begin(), cold.end());
    return clocks;
  }
  void load_checkpoint(const std::filesystem::path& stem, std::span<const TableClock> clocks) override {
    // The replica's storage is the cold part's (the layer's), so each part keeps as many clocks.
    const std::size_t hot = clocks.size() / 2;
    hot_->load_checkpoint(stem.string() + ".hot", clocks.first(hot));
    cold_->load_checkpoint(stem.string() + ".cold", clocks.subspan(hot));
  }
  void load_resharded_checkpoint(std::span<const std::filesystem::path> stems) override {
    for (const char* part : {".hot", ".cold"}) {
      std::vector<std::filesystem::path> parts;
      for (const auto& stem : stems) parts.emplace_back(stem.string() + part);
      (part[1] == 'h' ? *hot_ : *cold_).load_resharded_checkpoint(parts);
    }
  }

 private:
  // keys into the hot ones (part 0) and the cold ones (1), with each one's place in `keys`.
  void split(std::span<const Key> keys) {
    for (int part = 0; part < 2; ++part) {
      part_keys_[part].clear();
      part_at_[part].clear();
    }
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const int part = is_hot_(keys[i]) ? 0 : 1;
      part_keys_[part].push_back(keys[i]);
      part_at_[part].push_back(i);
    }
  }

  std::unique_ptr<RowStore> hot_, cold_;
  std::function<bool(Key)> is_hot_;
  std::vector<Key> part_keys_[2];
  std::vector<std::size_t> part_at_[2];
  std::vector<float> part_rows_[2];  // a part's rows (read) or gradients (apply)
};

class HotReplicated final : public EmbeddingScheme {
 public:
  explicit HotReplicated(const LayerSpec& spec)
      : spec_(spec), comm_(*spec.comm), hot_(hot_rows_of(spec)),
        rows_of_layer_(spec.make_store(hot_keys(spec, hot_), spec.dim()),
                       spec.make_store(spec.keys_modulo_ranks(), spec.dim()),
                       [this](Key key) { return is_hot(key, spec_.slot_of(key)); }),
        summed_layer_(summed(*spec.config)), cold_(summed_spec(spec), cold_plan(), rows_of_layer_.cold()) {
    hot_first_.push_back(0);
    for (const auto rows : hot_) hot_first_.push_back(hot_first_.back() + rows);
  }

  std::span<const PhaseDefinition> phases() const noexcept override { return hot_replicated_phases(); }
  std::vector<const comm::Communicator*> communicators() const override { return cold_.communicators(); }
  const RowStore& store() const override { return rows_of_layer_; }
  RowStore& store() override { return rows_of_layer_; }

  void forward(const Batch& batch, std::span<float> pooled, StepRecorder& recorder) override {
    const auto dim = static_cast<std::size_t>(spec_.dim());
    split(batch);
    const int ranks = comm_.size();
    cold_.forward(cold_batch_, pooled, recorder,
                  [ranks](Key key, std::int32_t) { return static_cast<int>(key % ranks); });
    router_.route(
        std::span<const Key>(hot_batch_.keys), 1, [](Key) { return 0; }, hot_routed_);
    recorder.lap("hot_route");
    // The rows where the store keeps them (static fp32), else copies.
    const auto& keys = hot_routed_.send_keys;
    row_addresses_.resize(keys.size());
    RowStore& replica = rows_of_layer_.hot();
    if (!replica.row_pointers(keys, row_addresses_)) {
      rows_.resize(keys.size() * dim);
      replica.read(keys, rows_);
      for (std::size_t i = 0; i < keys.size(); ++i) row_addresses_[i] = rows_.data() + i * dim;
    }
    recorder.lap("hot_lookup");
    // Added to the cold sums the exchange wrote, bag by bag.
    for (std::int64_t b = 0; b < hot_batch_.num_bags(); ++b) {
      float* out = pooled.data() + static_cast<std::size_t>(b) * dim;
      for (auto k = hot_batch_.offsets[static_cast<std::size_t>(b)];
           k < hot_batch_.offsets[static_cast<std::size_t>(b) + 1]; ++k) {
        const float* row = row_addresses_[hot_routed_.inverse[static_cast<std::size_t>(k)]];
        for (std::size_t d = 0; d < dim; ++d) out[d] += row[d];
      }
    }
    if (spec_.mean()) divide_by_bag_size(batch, dim, pooled);
    recorder.lap("hot_pool");
    recorder.count("keys", static_cast<std::int64_t>(batch.keys.size()));
    recorder.count("hot_keys", static_cast<std::int64_t>(hot_batch_.keys.size()));
    recorder.count("hot_lookups", static_cast<std::int64_t>(keys.size()));
    recorder.count("lookups", static_cast<std::int64_t>(keys.size()));
  }

  void backward(const Batch& batch, std::span<const float> grad_pooled, std::int64_t step,
                StepRecorder& recorder) override {
    const auto dim = static_cast<std::size_t>(spec_.dim());
    std::span<const float> grad = grad_pooled;
    if (spec_.mean()) {  // both paths pool sums: the mean's 1 / bag size applied once, here
      grad_scaled_.assign(grad_pooled.begin(), grad_pooled.end());
      divide_by_bag_size(batch, dim, grad_scaled_);
      grad = grad_scaled_;
    }
    const auto cold_grads = cold_.gradients(cold_batch_, grad, recorder);

    // Each hot occurrence adds its bag's gradient to its row's place in the dense hot gradient.
    const auto hot_total = static_cast<std::size_t>(hot_first_.back());
    hot_grad_.assign(hot_total * dim, 0.0f);
    touched_.assign(hot_total, 0);
    for (std::int64_t b = 0; b < hot_batch_.num_bags(); ++b) {
      const float* g = grad.data() + static_cast<std::size_t>(b) * dim;
      const auto slot = static_cast<std::size_t>(b % hot_batch_.num_slots);
      for (auto k = hot_batch_.offsets[static_cast<std::size_t>(b)];
           k < hot_batch_.offsets[static_cast<std::size_t>(b) + 1]; ++k) {
        const auto h = static_cast<std::size_t>(
            hot_first_[slot] + (hot_batch_.keys[static_cast<std::size_t>(k)] - spec_.slot_offsets[slot]));
        float* out = hot_grad_.data() + h * dim;
        for (std::size_t d = 0; d < dim; ++d) out[d] += g[d];
        touched_[h] = 1;
      }
    }
    recorder.lap("hot_pool_backward");
    // Called on any rank count, as data_parallel's (the Communicator counts the buffers both ways).
    comm_.allreduce(std::span<const float>(hot_grad_), std::span<float>(hot_grad_), comm::ReduceOp::kSum);
    comm_.allreduce(std::span<const std::int32_t>(touched_), std::span<std::int32_t>(touched_), comm::ReduceOp::kSum);
    recorder.lap("allreduce_hot_grads");

    // The hot rows any rank touched, with their summed gradients. Each store is updated once a
    // step (the Global update type's untouched rows once too).
    keys_.clear();
    grads_.clear();
    for (std::int32_t s = 0; s < spec_.slots(); ++s)
      for (auto h = hot_first_[static_cast<std::size_t>(s)]; h < hot_first_[static_cast<std::size_t>(s) + 1]; ++h) {
        if (touched_[static_cast<std::size_t>(h)] == 0) continue;
        keys_.push_back(spec_.slot_offsets[static_cast<std::size_t>(s)] +
                        (h - hot_first_[static_cast<std::size_t>(s)]));
        const auto at = hot_grad_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(h) * dim);
        grads_.insert(grads_.end(), at, at + static_cast<std::ptrdiff_t>(dim));
      }
    rows_of_layer_.cold().apply(cold_.gradient_keys(), cold_grads, *spec_.optimizer, step);
    rows_of_layer_.hot().apply(keys_, grads_, *spec_.optimizer, step);
    recorder.lap("update");
  }

 private:
  static config::EmbeddingLayer summed(config::EmbeddingLayer layer) {
    layer.combiner = config::Combiner::kSum;
    return layer;
  }
  // The cold path pools sums (the mean is applied over whole bags by this scheme).
  LayerSpec summed_spec(LayerSpec spec) const {
    spec.config = &summed_layer_;
    return spec;
  }
  static PooledPlan cold_plan() {
    PooledPlan plan;
    plan.output = PooledOutput::kReduceScatter;
    return plan;
  }
  bool is_hot(Key key, std::int32_t slot) const noexcept {
    return key - spec_.slot_offsets[static_cast<std::size_t>(slot)] < hot_[static_cast<std::size_t>(slot)];
  }
  // The batch's bags split into their cold keys and their hot keys (same bags, same order).
  void split(const Batch& batch) {
    for (Batch* part : {&cold_batch_, &hot_batch_}) {
      part->first_sample = batch.first_sample;
      part->num_samples = batch.num_samples;
      part->num_slots = batch.num_slots;
      part->offsets.assign(1, 0);
      part->keys.clear();
    }
    for (std::int64_t b = 0; b < batch.num_bags(); ++b) {
      const auto slot = static_cast<std::int32_t>(b % batch.num_slots);
      for (const Key key : batch.bag(b)) (is_hot(key, slot) ? hot_batch_ : cold_batch_).keys.push_back(key);
      cold_batch_.offsets.push_back(static_cast<std::int64_t>(cold_batch_.keys.size()));
      hot_batch_.offsets.push_back(static_cast<std::int64_t>(hot_batch_.keys.size()));
    }
  }

  LayerSpec spec_;
  comm::Communicator& comm_;
  std::vector<std::int64_t> hot_;        // hot rows per slot
  std::vector<std::int64_t> hot_first_;  // per slot: its first row in the dense hot buffer; back(): all hot rows
  HotAndColdRows rows_of_layer_;         // the hot replica and this rank's cold rows
  config::EmbeddingLayer summed_layer_;  // the layer with a sum combiner, for the cold path
  PooledExchange cold_;
  Batch cold_batch_, hot_batch_;
  KeyRouter router_;
  RoutedKeys hot_routed_;                    // this rank's distinct hot keys
  std::vector<const float*> row_addresses_;  // their rows, in the store or in rows_
  std::vector<float> rows_;                  // their rows, copied where the store cannot say where they are
  std::vector<float> grad_scaled_;           // mean only: the pooled gradients divided by the bag sizes
  std::vector<float> hot_grad_;              // [hot rows x dim], summed over ranks
  std::vector<std::int32_t> touched_;
  std::vector<Key> keys_;
  std::vector<float> grads_;
};

std::unique_ptr<EmbeddingScheme> make_hot_replicated(const LayerSpec& spec) {
  require_host_context(spec.context, spec.path + ": hot_replicated (no GPU step yet)");
  return std::make_unique<HotReplicated>(spec);
}

void check_hot_replicated(const LayerSpec& spec, int) {
  if (spec.config->storage.dynamic)
    throw InputError(spec.path +
                     ".storage.type: hot_replicated runs on static storage only (its hot rows are a dense "
                     "replica whose gradient an allreduce sums, as data_parallel's)");
  if (!spec.key_spaces_known)
    throw InputError(spec.path +
                     ".hot_rows: hot_replicated takes each slot's first rows as its hot ones, which needs the "
                     "slots' key spaces (the Data layer's slot_size_array)");
  const auto& hot = spec.config->hot_rows;  // one per slot (the config reader); empty: the default
  for (std::size_t s = 0; s < hot.size(); ++s)
    if (hot[s] > spec.slot_sizes[s])
      throw InputError(spec.path + ".hot_rows[" + std::to_string(s) + "]: expected at most the slot's " +
                       std::to_string(spec.slot_sizes[s]) + " rows, got " + std::to_string(hot[s]));
}

// The fullest rank: every hot row, and the most keys key % ranks gives a rank (HotAndColdRows).
std::int64_t most_rows_hot_replicated(const LayerSpec& spec, int ranks) {
  std::int64_t rows = 0;
  const auto hot = hot_rows_of(spec);
  for (std::size_t s = 0; s < hot.size(); ++s) rows += std::min(hot[s], spec.slot_sizes[s]);
  return rows + most_rows_modulo(spec, ranks);
}

}  // namespace

std::vector<std::int64_t> hot_rows_of(const LayerSpec& spec) {
  if (!spec.config->hot_rows.empty()) return spec.config->hot_rows;
  std::vector<std::int64_t> hot;
  for (const auto rows : spec.slot_sizes) hot.push_back((rows + kRowsPerDefaultHotRow - 1) / kRowsPerDefaultHotRow);
  return hot;
}

// Collectives per step: distributed_slot's four and the hot rows' two allreduces.
SchemeEntry hot_replicated_scheme() {
  SchemeEntry entry{.name = "hot_replicated",
                    .config_type = kShardedEmbedding,
                    .origin = "FlexShard (hot rows replicated, the rest distributed)",
                    .make = make_hot_replicated};
  entry.check = check_hot_replicated;
  entry.splits_key_spaces = true;
  entry.most_rows = most_rows_hot_replicated;
  entry.planner = PlannerModel{.ownership = Ownership::kHotReplicas, .collectives = 6, .static_only = true};
  return entry;
}

}  // namespace embscale::embedding
