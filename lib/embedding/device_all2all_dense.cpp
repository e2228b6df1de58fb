#include "embedding/device_all2all_dense.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "device/device_resources.hpp"
#include "embedding/device_bag_keys.hpp"

namespace embscale::embedding {
namespace {

class DeviceAll2AllDense final : public EmbeddingScheme {
 public:
  DeviceAll2AllDense(const LayerSpec& spec, std::unique_ptr<RowStore> store, std::span<const PhaseDefinition> phases)
      : spec_(checked(spec)), comm_(*spec.comm), ranks_(comm_.size()), store_(std::move(store)), phases_(phases),
        calls_(*spec.device_library, spec.context.stream,
               static_cast<std::uint64_t>(spec.global_batch) * static_cast<std::uint64_t>(spec.slots())),
        requested_(calls_, spec.slots()), grouped_(library()), order_(library()), counts_(library()),
        recv_keys_(library()), owner_rows_(library()), vectors_(library()), rows_(library()), grads_(library()),
        received_(library()) {}

  std::span<const PhaseDefinition> phases() const noexcept override { return phases_; }
  std::vector<const comm::Communicator*> communicators() const override {
    if (&comm_.host_communicator() == &comm_) return {&comm_};
    return {&comm_, &comm_.host_communicator()};  // the counts
  }
  const RowStore& store() const override { return *store_; }
  RowStore& store() override { return *store_; }

  void forward(const Batch& batch, std::span<float> pooled, StepRecorder& recorder) override {
    const DeviceBatch& input = *spec_.device_batch;
    const auto dim = static_cast<std::uint64_t>(spec_.dim());
    requested_.deduplicate(batch, input);
    const DeviceDistinct& requested = requested_.distinct();
    const portable::OwnerRef modulo{portable::OwnerKind::kModulo, ranks_};
    auto* grouped = grouped_.reserve_for<Key>(requested.n);
    auto* order = order_.reserve_for<std::uint32_t>(requested.n);
    auto* counts = counts_.reserve_for<std::uint64_t>(static_cast<std::size_t>(ranks_));
    calls_.check(calls_.step().embedding_step_group(&modulo, ranks_, requested.key_data(), requested.n, grouped, order,
                                                    counts, calls_.scratch_for(requested.n), calls_.stream()),
                 "embedding_step group");
    calls_.read_counts(counts, ranks_, send_counts_, "grouping the keys by owner");
    if (comm::total_count(send_counts_) != requested.n)  // the kernel counts no owner outside [0, ranks)
      throw Error(spec_.path + ": " + std::to_string(requested.n - comm::total_count(send_counts_)) +
                  " of the batch's keys have no owner among the layer's ranks (negative keys)");
    recorder.lap("route");

    recv_counts_.assign(send_counts_.size(), 0);
    comm_.host_communicator().alltoall(std::span<const std::size_t>(send_counts_), std::span<std::size_t>(recv_counts_),
                                       1);
    received_keys_ = comm::total_count(recv_counts_);
    auto* recv_keys = recv_keys_.reserve_for<Key>(received_keys_);
    comm_.alltoallv(std::span<const Key>(grouped, requested.n), std::span<const std::size_t>(send_counts_),
                    std::span<Key>(recv_keys, received_keys_), std::span<const std::size_t>(recv_counts_));
    recorder.lap("exchange_keys");

    // The owner reads each distinct key it received once (several ranks may ask for one key).
    calls_.deduplicate(recv_keys, 1, received_keys_, received_, "de-duplicating the received keys");
    auto* rows = rows_.reserve_for<float>(std::max(received_.n, requested.n) * dim);
    store_->read(std::span<const Key>(received_.key_data(), received_.n), std::span<float>(rows, received_.n * dim));
    auto* owner_rows = owner_rows_.reserve_for<float>(received_keys_ * dim);
    calls_.check(calls_.step().embedding_step_permute(rows, received_.inverse_data(), received_keys_, dim, 0,
                                                      owner_rows, calls_.stream()),
                 "embedding_step permute");
    recorder.lap("lookup");

    auto* vectors = vectors_.reserve_for<float>(requested.n * dim);
    comm_.alltoallv(std::span<const float>(owner_rows, received_keys_ * dim),
                    std::span<const std::size_t>(recv_counts_), std::span<float>(vectors, requested.n * dim),
                    std::span<const std::size_t>(send_counts_), dim);
    recorder.lap("exchange_vectors");

    // The rows back in de-duplicated order, then each bag from its keys' rows.
    calls_.check(calls_.step().embedding_step_permute(vectors, order, requested.n, dim, 1, rows, calls_.stream()),
                 "embedding_step permute");
    requested_.pool(batch, input, rows, dim, spec_.mean(), pooled.data());
    recorder.lap("pool");
    recorder.count("keys", static_cast<std::int64_t>(batch.keys.size()));
    recorder.count("unique_keys", static_cast<std::int64_t>(requested.n));
    recorder.count("lookups", static_cast<std::int64_t>(received_.n));
  }

  void backward(const Batch& batch, std::span<const float> grad_pooled, std::int64_t step,
                StepRecorder& recorder) override {
    const auto dim = static_cast<std::uint64_t>(spec_.dim());
    const DeviceDistinct& requested = requested_.distinct();
    auto* grads = grads_.reserve_for<float>(std::max(requested.n, received_.n) * dim);
    requested_.unpool(batch, *spec_.device_batch, grad_pooled, dim, spec_.mean(), grads);
    auto* vectors = vectors_.reserve_for<float>(requested.n * dim);
    calls_.check(calls_.step().embedding_step_permute(grads, static_cast<const std::uint32_t*>(order_.data()),
                                                      requested.n, dim, 0, vectors, calls_.stream()),
                 "embedding_step permute");
    recorder.lap("pool_backward");

    auto* owner_grads = owner_rows_.reserve_for<float>(received_keys_ * dim);
    comm_.alltoallv(std::span<const float>(vectors, requested.n * dim), std::span<const std::size_t>(send_counts_),
                    std::span<float>(owner_grads, received_keys_ * dim), std::span<const std::size_t>(recv_counts_),
                    dim);
    recorder.lap("exchange_grads");

    // Gradients of one key from several ranks summed in source-rank order, then applied once.
    calls_.check(calls_.step().embedding_step_unpool(nullptr, 1, received_.by_key_data(), received_.key_begin_data(),
                                                     received_.n, owner_grads, dim, 1, grads, calls_.stream()),
                 "embedding_step unpool");
    store_->apply(std::span<const Key>(received_.key_data(), received_.n),
                  std::span<const float>(grads, received_.n * dim), *spec_.optimizer, step);
    recorder.lap("update");
  }

 private:
  static const LayerSpec& checked(const LayerSpec& spec) {
    if (spec.context.on_host() || spec.device_batch == nullptr || spec.device_library == nullptr)
      throw Error(spec.path + ": the device all2all dense needs a device layer (its context, library and batch)");
    return spec;
  }
  const device::DeviceLibrary& library() const noexcept { return calls_.library(); }

  LayerSpec spec_;
  comm::Communicator& comm_;
  int ranks_;
  std::unique_ptr<RowStore> store_;
  std::span<const PhaseDefinition> phases_;
  DeviceStepCalls calls_;
  DeviceBagKeys requested_;  // this rank's batch keys, de-duplicated
  // Per step, kept from forward to backward.
  device::GrowingDeviceBuffer grouped_, order_, counts_, recv_keys_, owner_rows_, vectors_, rows_, grads_;
  DeviceDistinct received_;  // the keys this owner received, de-duplicated
  std::vector<std::size_t> send_counts_, recv_counts_;
  std::uint64_t received_keys_ = 0;
};

}  // namespace

std::unique_ptr<EmbeddingScheme> make_device_all2all_dense(const LayerSpec& spec, std::unique_ptr<RowStore> store,
                                                           std::span<const PhaseDefinition> phases) {
  return std::make_unique<DeviceAll2AllDense>(spec, std::move(store), phases);
}

}  // namespace embscale::embedding
