// DeviceBatch: a step's batch (core/batch.hpp) in a GPU's memory, as a device layer's step reads
// it: the keys, the bag offsets and the labels. The engine uploads each device layer's input
// before the step's clock starts (the data reader's work, as HugeCTR's reader stages batches on
// the GPU), into buffers kept across steps.
#pragma once

#include <cstdint>

#include "core/batch.hpp"
#include "core/execution_context.hpp"
#include "device/device_resources.hpp"

namespace embscale::embedding {

class DeviceBatch {
 public:
  DeviceBatch(const device::DeviceLibrary& library, ExecutionContext context);

  // Queues the copies of `batch`'s keys, offsets and labels on the context's stream and waits for
  // them (the host batch may change once this returns).
  void upload(const Batch& batch);

  const Key* keys() const noexcept { return static_cast<const Key*>(keys_.data()); }
  const std::int64_t* offsets() const noexcept { return static_cast<const std::int64_t*>(offsets_.data()); }
  const float* labels() const noexcept { return static_cast<const float*>(labels_.data()); }

 private:
  device::DeviceLibrary library_;
  ExecutionContext context_;
  device::GrowingDeviceBuffer keys_, offsets_, labels_;
};

}  // namespace embscale::embedding
