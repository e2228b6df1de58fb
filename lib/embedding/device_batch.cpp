#include "embedding/device_batch.hpp"

namespace embscale::embedding {

DeviceBatch::DeviceBatch(const device::DeviceLibrary& library, ExecutionContext context)
    : library_(library), context_(context), keys_(library), offsets_(library), labels_(library) {}

void DeviceBatch::upload(const Batch& batch) {
  keys_.assign(std::span<const Key>(batch.keys), context_.stream);
  offsets_.assign(std::span<const std::int64_t>(batch.offsets), context_.stream);
  labels_.assign(std::span<const float>(batch.labels), context_.stream);
  library_.check(library_.functions().stream_synchronize(context_.stream), "uploading the batch");
}

}  // namespace embscale::embedding
