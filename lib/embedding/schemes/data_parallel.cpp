// TorchRec's data-parallel sharding: every rank holds every row (a replica) and looks up and pools
// its own batch locally; backward, the whole table's gradient is summed over ranks by an
// allreduce (what DistributedDataParallel does with a dense table), with a count of the ranks
// that touched each row, and every rank applies the same update to the rows any rank touched.
#include <array>
#include <memory>

#include "core/error.hpp"
#include "embedding/device_data_parallel.hpp"
#include "embedding/key_router.hpp"
#include "embedding/pooling.hpp"
#include "embedding/requester_pooling.hpp"
#include "embedding/scheme.hpp"
#include "embedding/scheme_registry.hpp"

namespace embscale::embedding {
namespace {

constexpr std::array<PhaseDefinition, 6> kPhases = {{
    {"route", "de-duplicate this rank's keys (no exchange: every rank holds every row)"},
    {"lookup", "read the rows of this rank's keys from its replica"},
    {"pool", "sum or mean of each bag's rows (the combiner)"},
    {"pool_backward", "each distinct key's gradient: summed over its bags"},
    {"allreduce_grads", "sum the whole table's gradient and touch counts over ranks", "allreduce"},
    {"update", "every rank applies the optimizer to the rows any rank touched"},
}};

class DataParallel final : public EmbeddingScheme {
 public:
  explicit DataParallel(const LayerSpec& spec)
      : spec_(spec), comm_(*spec.comm), owned_(spec.all_keys()), store_(spec.make_store(owned_, spec.dim())) {}

  std::span<const PhaseDefinition> phases() const noexcept override { return kPhases; }
  std::vector<const comm::Communicator*> communicators() const override { return {&comm_}; }
  const RowStore& store() const override { return *store_; }
  RowStore& store() override { return *store_; }

  void forward(const Batch& batch, std::span<float> pooled, StepRecorder& recorder) override {
    const auto dim = static_cast<std::size_t>(spec_.dim());
    router_.route(
        std::span<const Key>(batch.keys), 1, [](Key) { return 0; }, routed_,
        spec_.config->deduplicate ? Deduplication::kOn : Deduplication::kOff);
    recorder.lap("route");
    // Without de-duplication send_keys holds every occurrence: each is read (what de-duplication saves).
    rows_.resize(routed_.send_keys.size() * dim);
    store_->read(routed_.send_keys, rows_);
    recorder.lap("lookup");
    pool_requested_rows(batch, routed_, rows_, dim, spec_.mean(), pooled,
                        static_cast<std::int64_t>(routed_.send_keys.size()), recorder);
  }

  void backward(const Batch& batch, std::span<const float> grad_pooled, std::int64_t step,
                StepRecorder& recorder) override {
    const auto dim = static_cast<std::size_t>(spec_.dim());
    unpool_bags(batch, routed_.inverse, grad_pooled, dim, spec_.mean(), rows_);
    const auto rows = static_cast<std::size_t>(owned_.rows());
    table_grad_.assign(rows * dim, 0.0f);
    touched_.assign(rows, 0);
    for (std::size_t i = 0; i < routed_.send_keys.size(); ++i) {
      const auto r = static_cast<std::size_t>(owned_.row_of(routed_.send_keys[i]));
      float* g = table_grad_.data() + r * dim;
      for (std::size_t d = 0; d < dim; ++d) g[d] += rows_[i * dim + d];
      touched_[r] = 1;
    }
    recorder.lap("pool_backward");
    comm_.allreduce(std::span<const float>(table_grad_), std::span<float>(table_grad_), comm::ReduceOp::kSum);
    comm_.allreduce(std::span<const std::int32_t>(touched_), std::span<std::int32_t>(touched_), comm::ReduceOp::kSum);
    recorder.lap("allreduce_grads");
    keys_.clear();
    grads_.clear();
    for (std::size_t r = 0; r < rows; ++r) {
      if (touched_[r] == 0) continue;
      keys_.push_back(owned_.key_of(static_cast<std::int64_t>(r)));
      grads_.insert(grads_.end(), table_grad_.begin() + static_cast<std::ptrdiff_t>(r * dim),
                    table_grad_.begin() + static_cast<std::ptrdiff_t>((r + 1) * dim));
    }
    store_->apply(keys_, grads_, *spec_.optimizer, step);
    recorder.lap("update");
  }

 private:
  LayerSpec spec_;
  comm::Communicator& comm_;
  OwnedKeys owned_;
  std::unique_ptr<RowStore> store_;
  KeyRouter router_;
  RoutedKeys routed_;
  std::vector<float> rows_;        // distinct keys' rows; backward: their gradients
  std::vector<float> table_grad_;  // [rows x dim], summed over ranks
  std::vector<std::int32_t> touched_;
  std::vector<Key> keys_;
  std::vector<float> grads_;
};

std::unique_ptr<EmbeddingScheme> make_data_parallel(const LayerSpec& spec) {
  // On a GPU: the same replica, the data flow on the device (device_data_parallel.hpp).
  if (!spec.context.on_host()) {
    OwnedKeys owned = spec.all_keys();
    auto store = spec.make_store(owned, spec.dim());
    return make_device_data_parallel(spec, std::move(owned), std::move(store), kPhases);
  }
  return std::make_unique<DataParallel>(spec);
}

void check_data_parallel(const LayerSpec& spec, int) {
  if (spec.config->storage.dynamic)
    throw InputError(spec.path +
                     ".storage.type: data_parallel runs on static storage only (its gradient is the "
                     "whole table's, summed by an allreduce, as TorchRec's data-parallel tables are dense)");
}

}  // namespace

// Collectives per step: two allreduces (the table's gradient and its touched rows).
SchemeEntry data_parallel_scheme() {
  SchemeEntry entry{
      .name = "data_parallel", .config_type = kShardedEmbedding, .origin = "TorchRec", .make = make_data_parallel};
  entry.check = check_data_parallel;
  entry.dedups_before_exchange = true;
  entry.most_rows = every_row;
  entry.planner = PlannerModel{.ownership = Ownership::kReplicas, .collectives = 2, .static_only = true};
  entry.runs_on_device = true;
  return entry;
}

}  // namespace embscale::embedding
