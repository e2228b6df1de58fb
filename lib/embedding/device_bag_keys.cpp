#include "embedding/device_bag_keys.hpp"

#include <vector>

#include "embedding/device_step_family.hpp"

namespace embscale::embedding {

DeviceStepCalls::DeviceStepCalls(const device::DeviceLibrary& library, void* stream, std::uint64_t positions)
    : library_(library), step_(&embedding_step_family(library)), stream_(stream), positions_(positions),
      scratch_(library) {}

void DeviceStepCalls::synchronize(const char* what) const {
  check(library_.functions().stream_synchronize(stream_), what);
}

void* DeviceStepCalls::scratch_for(std::uint64_t n) {
  std::uint64_t bytes = 0;
  check(step_->embedding_step_scratch(n, positions_, &bytes), "embedding_step scratch");
  return scratch_.reserve(static_cast<std::int64_t>(bytes));
}

void DeviceStepCalls::deduplicate(const Key* keys, std::uint64_t stride, std::uint64_t n, DeviceDistinct& out,
                                  const char* what) {
  auto* count = out.count.reserve_for<std::uint64_t>(1);
  check(
      step_->embedding_step_unique(keys, stride, n, out.keys.reserve_for<Key>(n), count,
                                   out.inverse.reserve_for<std::uint32_t>(n), out.by_key.reserve_for<std::uint32_t>(n),
                                   out.key_begin.reserve_for<std::uint32_t>(n + 1), scratch_for(n), stream_),
      "embedding_step unique");
  check(library_.functions().copy_async(&out.n, count, sizeof out.n, stream_), what);
  synchronize(what);
}

void DeviceStepCalls::read_counts(const std::uint64_t* counts, int ranks, std::vector<std::size_t>& out,
                                  const char* what) {
  static_assert(sizeof(std::size_t) == sizeof(std::uint64_t), "the counts are copied as uint64");
  out.resize(static_cast<std::size_t>(ranks));
  check(library_.functions().copy_async(out.data(), counts,
                                        static_cast<std::int64_t>(out.size() * sizeof(std::uint64_t)), stream_),
        what);
  synchronize(what);
}

DeviceBagKeys::DeviceBagKeys(DeviceStepCalls& calls, std::int32_t slots)
    : calls_(calls), group_of_dest_(calls.library()), base_(calls.library()), owned_(calls.library()),
      slot_index_(calls.library()), pairs_(calls.library()), one_count_(calls.library()), grad_pooled_(calls.library()),
      distinct_(calls.library()) {
  // Every occurrence's pair carries its bag: one group of every slot, from bag 0.
  std::vector<std::int32_t> slot_index;
  for (std::int32_t s = 0; s < slots; ++s) slot_index.push_back(s);
  const std::vector<std::uint64_t> group_of_dest = {0};
  const std::vector<std::int64_t> base = {0}, owned = {slots};
  void* stream = calls.stream();
  bag_placement_ = {slots, group_of_dest_.assign(std::span<const std::uint64_t>(group_of_dest), stream),
                    base_.assign(std::span<const std::int64_t>(base), stream),
                    owned_.assign(std::span<const std::int64_t>(owned), stream),
                    slot_index_.assign(std::span<const std::int32_t>(slot_index), stream)};
  calls.synchronize("uploading the bags' placement");
}

void DeviceBagKeys::deduplicate(const Batch& batch, const DeviceBatch& input) {
  const std::uint64_t n = batch.keys.size(), bags = static_cast<std::uint64_t>(batch.num_bags());
  const portable::OwnerRef one_rank{};  // every pair to this rank: no owner asked
  auto* pairs = pairs_.reserve_for<portable::KeyPosition>(n);
  calls_.check(calls_.step().embedding_step_route(
                   &one_rank, &bag_placement_, 1, 1, input.keys(), n, input.offsets(), bags, batch.num_slots, pairs,
                   one_count_.reserve_for<std::uint64_t>(1), calls_.scratch_for(n), calls_.stream()),
               "embedding_step route");
  calls_.deduplicate(&pairs->key, 2, n, distinct_, "de-duplicating the batch's keys");
}

void DeviceBagKeys::pool(const Batch& batch, const DeviceBatch& input, const float* distinct_rows, std::uint64_t dim,
                         bool mean, float* pooled) {
  const std::uint64_t n = batch.keys.size(), bags = static_cast<std::uint64_t>(batch.num_bags());
  calls_.check(calls_.step().embedding_step_pool(pairs_.data(), distinct_.inverse_data(), n, distinct_rows, dim, pooled,
                                                 bags, calls_.scratch_for(n), calls_.stream()),
               "embedding_step pool");
  if (mean)
    calls_.check(calls_.step().embedding_step_scale_bags(input.offsets(), bags, dim, pooled, calls_.stream()),
                 "embedding_step scale_bags");
}

void DeviceBagKeys::unpool(const Batch& batch, const DeviceBatch& input, std::span<const float> grad_pooled,
                           std::uint64_t dim, bool mean, float* grads) {
  const float* grad = grad_pooled.data();
  if (mean) {  // the mean's scale in a copy: grad_pooled is the caller's
    auto* divided = grad_pooled_.reserve_for<float>(grad_pooled.size());
    calls_.check(calls_.library().functions().copy_async(
                     divided, grad, static_cast<std::int64_t>(grad_pooled.size_bytes()), calls_.stream()),
                 "copying the pooled gradients");
    calls_.check(calls_.step().embedding_step_scale_bags(input.offsets(), static_cast<std::uint64_t>(batch.num_bags()),
                                                         dim, divided, calls_.stream()),
                 "embedding_step scale_bags");
    grad = divided;
  }
  const auto* pairs = static_cast<const portable::KeyPosition*>(pairs_.data());
  calls_.check(
      calls_.step().embedding_step_unpool(&pairs->position, 2, distinct_.by_key_data(), distinct_.key_begin_data(),
                                          distinct_.n, grad, dim, 1, grads, calls_.stream()),
      "embedding_step unpool");
}

}  // namespace embscale::embedding
