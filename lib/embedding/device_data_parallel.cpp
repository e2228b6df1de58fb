#include "embedding/device_data_parallel.hpp"

#include "core/error.hpp"
#include "embedding/device_bag_keys.hpp"

namespace embscale::embedding {
namespace {

class DeviceDataParallel final : public EmbeddingScheme {
 public:
  DeviceDataParallel(const LayerSpec& spec, OwnedKeys owned, std::unique_ptr<RowStore> store,
                     std::span<const PhaseDefinition> phases)
      : spec_(checked(spec)), comm_(*spec.comm), owned_(std::move(owned)), store_(std::move(store)), phases_(phases),
        calls_(*spec.device_library, spec.context.stream,
               static_cast<std::uint64_t>(spec.global_batch) * static_cast<std::uint64_t>(spec.slots())),
        keys_(calls_, spec.slots()), rows_family_(&spec.device_library->kernels(device::KernelFamily::embedding_rows)),
        ranges_(library()), rows_(library()), grads_(library()), table_grad_(library()), touched_(library()),
        selected_keys_(library()), selected_grads_(library()), selected_count_(library()), select_scratch_(library()) {
    const auto ranges = owned_.portable_ranges();
    range_count_ = ranges.size();
    ranges_.assign(std::span<const portable::OwnedRange>(ranges), calls_.stream());
    calls_.synchronize("uploading the replica's ranges");
  }

  std::span<const PhaseDefinition> phases() const noexcept override { return phases_; }
  std::vector<const comm::Communicator*> communicators() const override { return {&comm_}; }
  const RowStore& store() const override { return *store_; }
  RowStore& store() override { return *store_; }

  void forward(const Batch& batch, std::span<float> pooled, StepRecorder& recorder) override {
    const auto dim = static_cast<std::uint64_t>(spec_.dim());
    keys_.deduplicate(batch, *spec_.device_batch);
    const DeviceDistinct& distinct = keys_.distinct();
    recorder.lap("route");
    auto* rows = rows_.reserve_for<float>(distinct.n * dim);
    store_->read(std::span<const Key>(distinct.key_data(), distinct.n), std::span<float>(rows, distinct.n * dim));
    recorder.lap("lookup");
    keys_.pool(batch, *spec_.device_batch, rows, dim, spec_.mean(), pooled.data());
    recorder.lap("pool");
    recorder.count("keys", static_cast<std::int64_t>(batch.keys.size()));
    recorder.count("unique_keys", static_cast<std::int64_t>(distinct.n));
    recorder.count("lookups", static_cast<std::int64_t>(distinct.n));
  }

  void backward(const Batch& batch, std::span<const float> grad_pooled, std::int64_t step,
                StepRecorder& recorder) override {
    const auto dim = static_cast<std::uint64_t>(spec_.dim());
    const auto table_rows = static_cast<std::uint64_t>(owned_.rows());
    const DeviceDistinct& distinct = keys_.distinct();
    auto* grads = grads_.reserve_for<float>(distinct.n * dim);
    keys_.unpool(batch, *spec_.device_batch, grad_pooled, dim, spec_.mean(), grads);
    auto* table_grad = table_grad_.reserve_for<float>(table_rows * dim);
    auto* touched = touched_.reserve_for<std::int32_t>(table_rows);
    const auto& f = library().functions();
    calls_.check(
        f.memset_async(table_grad, 0, static_cast<std::int64_t>(table_rows * dim * sizeof(float)), calls_.stream()),
        "clearing the table's gradient");
    calls_.check(
        f.memset_async(touched, 0, static_cast<std::int64_t>(table_rows * sizeof(std::int32_t)), calls_.stream()),
        "clearing the touch flags");
    calls_.check(rows_family_->embedding_rows_scatter(ranges_.data(), range_count_, distinct.key_data(), distinct.n,
                                                      grads, dim, table_grad, touched, calls_.stream()),
                 "embedding_rows scatter");
    recorder.lap("pool_backward");
    comm_.allreduce(std::span<const float>(table_grad, table_rows * dim),
                    std::span<float>(table_grad, table_rows * dim), comm::ReduceOp::kSum);
    comm_.allreduce(std::span<const std::int32_t>(touched, table_rows), std::span<std::int32_t>(touched, table_rows),
                    comm::ReduceOp::kSum);
    recorder.lap("allreduce_grads");
    std::uint64_t bytes = 0;
    calls_.check(rows_family_->embedding_rows_select_scratch(table_rows, &bytes), "embedding_rows select scratch");
    auto* keys = selected_keys_.reserve_for<Key>(table_rows);
    auto* selected = selected_grads_.reserve_for<float>(table_rows * dim);
    auto* count = selected_count_.reserve_for<std::uint64_t>(1);
    calls_.check(rows_family_->embedding_rows_select(
                     ranges_.data(), range_count_, touched, table_grad, dim, table_rows, keys, selected, count,
                     select_scratch_.reserve(static_cast<std::int64_t>(bytes)), calls_.stream()),
                 "embedding_rows select");
    std::uint64_t n = 0;
    calls_.check(f.copy_async(&n, count, sizeof n, calls_.stream()), "reading the touched rows' count");
    calls_.synchronize("selecting the touched rows");
    store_->apply(std::span<const Key>(keys, n), std::span<const float>(selected, n * dim), *spec_.optimizer, step);
    recorder.lap("update");
  }

 private:
  static const LayerSpec& checked(const LayerSpec& spec) {
    if (spec.context.on_host() || spec.device_batch == nullptr || spec.device_library == nullptr)
      throw Error(spec.path + ": the device data-parallel flow needs a device layer (its context, library and batch)");
    return spec;
  }
  const device::DeviceLibrary& library() const noexcept { return calls_.library(); }

  LayerSpec spec_;
  comm::Communicator& comm_;
  OwnedKeys owned_;
  std::unique_ptr<RowStore> store_;
  std::span<const PhaseDefinition> phases_;
  DeviceStepCalls calls_;
  DeviceBagKeys keys_;
  const device::DeviceFunctions* rows_family_;
  device::GrowingDeviceBuffer ranges_;  // the replica's owned ranges (every key of the layer)
  std::uint64_t range_count_ = 0;
  device::GrowingDeviceBuffer rows_, grads_, table_grad_, touched_, selected_keys_, selected_grads_, selected_count_,
      select_scratch_;
};

}  // namespace

std::unique_ptr<EmbeddingScheme> make_device_data_parallel(const LayerSpec& spec, OwnedKeys owned,
                                                           std::unique_ptr<RowStore> store,
                                                           std::span<const PhaseDefinition> phases) {
  return std::make_unique<DeviceDataParallel>(spec, std::move(owned), std::move(store), phases);
}

}  // namespace embscale::embedding
