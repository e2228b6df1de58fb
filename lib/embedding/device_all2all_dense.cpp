#include "embedding/device_all2all_dense.hpp"

#include <string>
#include <vector>

#include "core/error.hpp"
#include "device/device_resources.hpp"
#include "embedding/device_batch.hpp"
#include "embedding/device_step_family.hpp"
#include "embedding/portable/step_ref.hpp"

namespace embscale::embedding {
namespace {

static_assert(sizeof(std::size_t) == sizeof(std::uint64_t), "the counts are copied as uint64");

std::uint64_t total(const std::vector<std::size_t>& counts) {
  std::uint64_t n = 0;
  for (const auto c : counts) n += c;
  return n;
}

// A de-duplication's results on the device: the distinct keys, each key's index among them, and
// the grouping of the keys by distinct key (the unpool's).
struct Distinct {
  explicit Distinct(const device::DeviceLibrary& library)
      : keys(library), count(library), inverse(library), by_key(library), key_begin(library) {}
  device::GrowingDeviceBuffer keys, count, inverse, by_key, key_begin;
  std::uint64_t n = 0;  // distinct keys (on the host)
  const Key* key_data() const { return static_cast<const Key*>(keys.data()); }
  const std::uint32_t* inverse_data() const { return static_cast<const std::uint32_t*>(inverse.data()); }
  const std::uint32_t* by_key_data() const { return static_cast<const std::uint32_t*>(by_key.data()); }
  const std::uint32_t* key_begin_data() const { return static_cast<const std::uint32_t*>(key_begin.data()); }
};

class DeviceAll2AllDense final : public EmbeddingScheme {
 public:
  DeviceAll2AllDense(const LayerSpec& spec, std::unique_ptr<RowStore> store, std::span<const PhaseDefinition> phases)
      : spec_(spec), comm_(*spec.comm), ranks_(comm_.size()), store_(std::move(store)), phases_(phases),
        library_(*spec.device_library), step_(&embedding_step_family(library_)), stream_(spec.context.stream),
        group_of_dest_(library_), base_(library_), owned_(library_), slot_index_(library_), pairs_(library_),
        one_count_(library_), grouped_(library_), order_(library_), counts_(library_), recv_keys_(library_),
        owner_rows_(library_), vectors_(library_), rows_(library_), grads_(library_), grad_pooled_(library_),
        scratch_(library_), requested_(library_), received_(library_) {
    if (spec.context.on_host() || spec.device_batch == nullptr)
      throw Error(spec.path + ": the device all2all dense needs a device layer (its context and batch)");
    // Every occurrence's pair carries its bag: one group of every slot, from bag 0.
    std::vector<std::int32_t> slot_index;
    for (std::int32_t s = 0; s < spec.slots(); ++s) slot_index.push_back(s);
    const std::vector<std::uint64_t> group_of_dest = {0};
    const std::vector<std::int64_t> base = {0}, owned = {spec.slots()};
    bag_placement_ = {spec.slots(), group_of_dest_.assign(std::span<const std::uint64_t>(group_of_dest), stream_),
                      base_.assign(std::span<const std::int64_t>(base), stream_),
                      owned_.assign(std::span<const std::int64_t>(owned), stream_),
                      slot_index_.assign(std::span<const std::int32_t>(slot_index), stream_)};
    synchronize("uploading the bags' placement");
  }

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
    const std::uint64_t n = batch.keys.size(), bags = static_cast<std::uint64_t>(batch.num_bags());
    const portable::OwnerRef one_rank{};  // every pair to this rank: no owner asked
    auto* pairs = pairs_.reserve_for<portable::KeyPosition>(n);
    check(step_->embedding_step_route(&one_rank, &bag_placement_, 1, 1, input.keys(), n, input.offsets(), bags,
                                      spec_.slots(), pairs, one_count_.reserve_for<std::uint64_t>(1), scratch_for(n),
                                      stream_),
          "embedding_step route");
    deduplicate(&pairs->key, 2, n, requested_, "de-duplicating the batch's keys");
    const portable::OwnerRef modulo{portable::OwnerKind::kModulo, ranks_};
    auto* grouped = grouped_.reserve_for<Key>(requested_.n);
    auto* order = order_.reserve_for<std::uint32_t>(requested_.n);
    auto* counts = counts_.reserve_for<std::uint64_t>(static_cast<std::size_t>(ranks_));
    check(step_->embedding_step_group(&modulo, ranks_, requested_.key_data(), requested_.n, grouped, order, counts,
                                      scratch_for(requested_.n), stream_),
          "embedding_step group");
    send_counts_.resize(static_cast<std::size_t>(ranks_));
    check(library_.functions().copy_async(send_counts_.data(), counts,
                                          static_cast<std::int64_t>(send_counts_.size() * sizeof(std::uint64_t)),
                                          stream_),
          "reading the owners' counts");
    synchronize("grouping the keys by owner");
    if (total(send_counts_) != requested_.n)  // the kernel counts no owner outside [0, ranks)
      throw Error(spec_.path + ": " + std::to_string(requested_.n - total(send_counts_)) +
                  " of the batch's keys have no owner among the layer's ranks (negative keys)");
    recorder.lap("route");

    recv_counts_.assign(send_counts_.size(), 0);
    comm_.host_communicator().alltoall(std::span<const std::size_t>(send_counts_), std::span<std::size_t>(recv_counts_),
                                       1);
    received_keys_ = total(recv_counts_);
    auto* recv_keys = recv_keys_.reserve_for<Key>(received_keys_);
    comm_.alltoallv(std::span<const Key>(grouped, requested_.n), std::span<const std::size_t>(send_counts_),
                    std::span<Key>(recv_keys, received_keys_), std::span<const std::size_t>(recv_counts_));
    recorder.lap("exchange_keys");

    // The owner reads each distinct key it received once (several ranks may ask for one key).
    deduplicate(recv_keys, 1, received_keys_, received_, "de-duplicating the received keys");
    auto* rows = rows_.reserve_for<float>(received_.n * dim);
    store_->read(std::span<const Key>(received_.key_data(), received_.n), std::span<float>(rows, received_.n * dim));
    auto* owner_rows = owner_rows_.reserve_for<float>(received_keys_ * dim);
    check(step_->embedding_step_permute(rows, received_.inverse_data(), received_keys_, dim, 0, owner_rows, stream_),
          "embedding_step permute");
    recorder.lap("lookup");

    auto* vectors = vectors_.reserve_for<float>(requested_.n * dim);
    comm_.alltoallv(std::span<const float>(owner_rows, received_keys_ * dim),
                    std::span<const std::size_t>(recv_counts_), std::span<float>(vectors, requested_.n * dim),
                    std::span<const std::size_t>(send_counts_), dim);
    recorder.lap("exchange_vectors");

    // The rows back in de-duplicated order, then each bag from its keys' rows.
    auto* distinct_rows = rows_.reserve_for<float>(std::max(received_.n, requested_.n) * dim);
    check(step_->embedding_step_permute(vectors, order, requested_.n, dim, 1, distinct_rows, stream_),
          "embedding_step permute");
    check(step_->embedding_step_pool(pairs, requested_.inverse_data(), n, distinct_rows, dim, pooled.data(), bags,
                                     scratch_for(n), stream_),
          "embedding_step pool");
    if (spec_.mean())
      check(step_->embedding_step_scale_bags(input.offsets(), bags, dim, pooled.data(), stream_),
            "embedding_step scale_bags");
    recorder.lap("pool");
    recorder.count("keys", static_cast<std::int64_t>(n));
    recorder.count("unique_keys", static_cast<std::int64_t>(requested_.n));
    recorder.count("lookups", static_cast<std::int64_t>(received_.n));
  }

  void backward(const Batch& batch, std::span<const float> grad_pooled, std::int64_t step,
                StepRecorder& recorder) override {
    const DeviceBatch& input = *spec_.device_batch;
    const auto dim = static_cast<std::uint64_t>(spec_.dim());
    const float* grad = grad_pooled.data();
    if (spec_.mean()) {  // the mean's scale in a copy: grad_pooled is the caller's
      auto* divided = grad_pooled_.reserve_for<float>(grad_pooled.size());
      check(
          library_.functions().copy_async(divided, grad, static_cast<std::int64_t>(grad_pooled.size_bytes()), stream_),
          "copying the pooled gradients");
      check(step_->embedding_step_scale_bags(input.offsets(), static_cast<std::uint64_t>(batch.num_bags()), dim,
                                             divided, stream_),
            "embedding_step scale_bags");
      grad = divided;
    }
    const auto* pairs = static_cast<const portable::KeyPosition*>(pairs_.data());
    auto* grads = grads_.reserve_for<float>(std::max(requested_.n, received_.n) * dim);
    check(step_->embedding_step_unpool(&pairs->position, 2, requested_.by_key_data(), requested_.key_begin_data(),
                                       requested_.n, grad, dim, 1, grads, stream_),
          "embedding_step unpool");
    auto* vectors = vectors_.reserve_for<float>(requested_.n * dim);
    check(step_->embedding_step_permute(grads, static_cast<const std::uint32_t*>(order_.data()), requested_.n, dim, 0,
                                        vectors, stream_),
          "embedding_step permute");
    recorder.lap("pool_backward");

    auto* owner_grads = owner_rows_.reserve_for<float>(received_keys_ * dim);
    comm_.alltoallv(std::span<const float>(vectors, requested_.n * dim), std::span<const std::size_t>(send_counts_),
                    std::span<float>(owner_grads, received_keys_ * dim), std::span<const std::size_t>(recv_counts_),
                    dim);
    recorder.lap("exchange_grads");

    // Gradients of one key from several ranks summed in source-rank order, then applied once.
    check(step_->embedding_step_unpool(nullptr, 1, received_.by_key_data(), received_.key_begin_data(), received_.n,
                                       owner_grads, dim, 1, grads, stream_),
          "embedding_step unpool");
    store_->apply(std::span<const Key>(received_.key_data(), received_.n),
                  std::span<const float>(grads, received_.n * dim), *spec_.optimizer, step);
    recorder.lap("update");
  }

 private:
  void check(int code, const char* what) const { library_.check(code, what); }
  void synchronize(const char* what) const { check(library_.functions().stream_synchronize(stream_), what); }
  void* scratch_for(std::uint64_t n) {
    std::uint64_t bytes = 0;
    check(step_->embedding_step_scratch(
              n, static_cast<std::uint64_t>(spec_.global_batch) * static_cast<std::uint64_t>(spec_.slots()), &bytes),
          "embedding_step scratch");
    return scratch_.reserve(static_cast<std::int64_t>(bytes));
  }
  // The `n` keys at keys[j x stride] de-duplicated into `out` (its count read back: one wait).
  void deduplicate(const Key* keys, std::uint64_t stride, std::uint64_t n, Distinct& out, const char* what) {
    auto* count = out.count.reserve_for<std::uint64_t>(1);
    check(step_->embedding_step_unique(keys, stride, n, out.keys.reserve_for<Key>(n), count,
                                       out.inverse.reserve_for<std::uint32_t>(n),
                                       out.by_key.reserve_for<std::uint32_t>(n),
                                       out.key_begin.reserve_for<std::uint32_t>(n + 1), scratch_for(n), stream_),
          "embedding_step unique");
    check(library_.functions().copy_async(&out.n, count, sizeof out.n, stream_), what);
    synchronize(what);
  }

  LayerSpec spec_;
  comm::Communicator& comm_;
  int ranks_;
  std::unique_ptr<RowStore> store_;
  std::span<const PhaseDefinition> phases_;
  device::DeviceLibrary library_;
  const device::DeviceFunctions* step_;
  void* stream_;
  device::GrowingDeviceBuffer group_of_dest_, base_, owned_, slot_index_;  // the bags' placement
  portable::PlacementRef bag_placement_;
  // Per step, kept from forward to backward.
  device::GrowingDeviceBuffer pairs_, one_count_, grouped_, order_, counts_, recv_keys_, owner_rows_, vectors_, rows_,
      grads_, grad_pooled_, scratch_;
  Distinct requested_;  // this rank's batch keys, de-duplicated
  Distinct received_;   // the keys this owner received, de-duplicated
  std::vector<std::size_t> send_counts_, recv_counts_;
  std::uint64_t received_keys_ = 0;
};

}  // namespace

std::unique_ptr<EmbeddingScheme> make_device_all2all_dense(const LayerSpec& spec, std::unique_ptr<RowStore> store,
                                                           std::span<const PhaseDefinition> phases) {
  return std::make_unique<DeviceAll2AllDense>(spec, std::move(store), phases);
}

}  // namespace embscale::embedding
