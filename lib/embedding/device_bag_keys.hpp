// What the requester-pooled schemes share on a GPU (device_all2all_dense.cpp, and data_parallel's
// device flow): a batch's keys de-duplicated, each bag pooled from its distinct keys' rows, and
// the gradients of the distinct keys from the pooled gradients, with lib/device's embedding_step
// family, in the host's orders (embedding/pooling.hpp's pool_bags and unpool_bags: each sum from
// +0 in key order; the mean's scale after the sum, and on the gradient before it).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/batch.hpp"
#include "device/device_resources.hpp"
#include "embedding/device_batch.hpp"
#include "embedding/portable/step_ref.hpp"

namespace embscale::embedding {

// A de-duplication's results on the device (embedding_step_unique): the distinct keys, each key's
// index among them, the grouping of the keys by distinct key; `n` distinct keys (on the host).
struct DeviceDistinct {
  explicit DeviceDistinct(const device::DeviceLibrary& library)
      : keys(library), count(library), inverse(library), by_key(library), key_begin(library) {}
  device::GrowingDeviceBuffer keys, count, inverse, by_key, key_begin;
  std::uint64_t n = 0;
  const Key* key_data() const { return static_cast<const Key*>(keys.data()); }
  const std::uint32_t* inverse_data() const { return static_cast<const std::uint32_t*>(inverse.data()); }
  const std::uint32_t* by_key_data() const { return static_cast<const std::uint32_t*>(by_key.data()); }
  const std::uint32_t* key_begin_data() const { return static_cast<const std::uint32_t*>(key_begin.data()); }
};

// The step family's calls a requester-pooled flow makes, on one stream, with one scratch buffer.
class DeviceStepCalls {
 public:
  // `positions`: the most bags a batch has (the pool's output rows).
  DeviceStepCalls(const device::DeviceLibrary& library, void* stream, std::uint64_t positions);

  const device::DeviceLibrary& library() const noexcept { return library_; }
  const device::DeviceFunctions& step() const noexcept { return *step_; }
  void* stream() const noexcept { return stream_; }
  void check(int code, const char* what) const { library_.check(code, what); }
  void synchronize(const char* what) const;
  // Scratch for a call on up to n keys.
  void* scratch_for(std::uint64_t n);
  // The `n` keys at keys[j x stride] de-duplicated into `out` (its count read back: one wait).
  void deduplicate(const Key* keys, std::uint64_t stride, std::uint64_t n, DeviceDistinct& out, const char* what);
  // The `ranks` counts a route or group left on the device, read into `out` (one wait).
  void read_counts(const std::uint64_t* counts, int ranks, std::vector<std::size_t>& out, const char* what);

 private:
  device::DeviceLibrary library_;
  const device::DeviceFunctions* step_;
  void* stream_;
  std::uint64_t positions_;
  device::GrowingDeviceBuffer scratch_;
};

// A batch's (key, bag) pairs and their distinct keys, kept from a forward to its backward.
class DeviceBagKeys {
 public:
  // For a layer of `slots` slots whose batches have at most `positions` bags.
  DeviceBagKeys(DeviceStepCalls& calls, std::int32_t slots);

  // The batch's pairs (every key with its bag) and their de-duplication.
  void deduplicate(const Batch& batch, const DeviceBatch& input);
  const DeviceDistinct& distinct() const noexcept { return distinct_; }
  // pooled[b] = the sum from +0 of the rows (distinct_rows[distinct index], dim each) of bag b's
  // keys in order, then the mean's scale.
  void pool(const Batch& batch, const DeviceBatch& input, const float* distinct_rows, std::uint64_t dim, bool mean,
            float* pooled);
  // The distinct keys' gradients (distinct().n x dim, in the calls' buffer `grads`): the sum from
  // +0 over each key's occurrences of its bag's gradient (the mean: divided first, in a copy).
  void unpool(const Batch& batch, const DeviceBatch& input, std::span<const float> grad_pooled, std::uint64_t dim,
              bool mean, float* grads);

 private:
  DeviceStepCalls& calls_;
  device::GrowingDeviceBuffer group_of_dest_, base_, owned_, slot_index_;  // the bags' placement
  portable::PlacementRef bag_placement_;
  device::GrowingDeviceBuffer pairs_, one_count_, grad_pooled_;
  DeviceDistinct distinct_;
};

}  // namespace embscale::embedding
