// DevicePooledExchange: PooledExchange's data flow (pooled_exchange.hpp) on a GPU, for a layer
// drawn on a device. The scheme is the same (its plan, its owned rows, its OwnerRule); the phases
// are the same names with the same meanings, so a GPU report compares with a CPU one phase by
// phase. What differs is where each phase runs:
//   route          embedding_step_route on the device batch: pairs grouped by owner, counts
//   exchange_keys  counts over the host communicator, pairs over the layer's (NCCL, or staged)
//   lookup         embedding_step_unique, then the device store's read of the distinct keys
//   pool           embedding_step_pool into the owner buffer (one rank: the pooled output)
//   <output>       the output's collectives and copies on device buffers (pooled_output.hpp)
//   unpack         the mean's scaling (embedding_step_scale_bags)
//   pool_backward  embedding_step_unpool: each distinct key's gradient
//   update         the device store's apply
// The kernels follow the host's summation orders, so a device step gives the host step's bits
// (tests/embedding/device_pooled_exchange_mpi_test.cpp, on the stand-in library; on a GPU,
// tests/gpu). The host waits for the device twice per forward: for the owners' counts (the
// exchange's sizes) and for the distinct count (the lookup's size), as HugeCTR's step does.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "device/device_resources.hpp"
#include "embedding/device_bag_keys.hpp"
#include "embedding/owner_rule.hpp"
#include "embedding/pooled_output.hpp"
#include "embedding/scheme.hpp"

namespace embscale::embedding {

class DevicePooledExchange {
 public:
  // `spec` a device layer (its context, device_library and device_batch set); `store` a device
  // store. Throws Error when the library lacks the embedding_step family or was built with other
  // layouts.
  DevicePooledExchange(const LayerSpec& spec, PooledPlan plan, RowStore& store, const OwnerRule& owner);

  std::vector<const comm::Communicator*> communicators() const;

  // pooled and grad_pooled: device memory, [batch.num_bags() x dim]; the batch's device copy is
  // spec.device_batch's.
  void forward(const Batch& batch, std::span<float> pooled, StepRecorder& recorder);
  void backward(const Batch& batch, std::span<const float> grad_pooled, std::int64_t step, StepRecorder& recorder);

 private:
  const device::DeviceLibrary& library() const noexcept { return calls_.library(); }

  LayerSpec spec_;
  bool every_rank_gets_every_key_;
  RowStore& store_;
  comm::Communicator& comm_;
  int ranks_;
  std::size_t width_;
  std::unique_ptr<PooledOutputExchange> output_;
  std::uint64_t positions_;  // rows of the owner buffer
  DeviceStepCalls calls_;
  // The rules' arrays on the device, and the refs over them.
  device::GrowingDeviceBuffer slot_owner_, slot_offset_, block_rows_;
  device::GrowingDeviceBuffer group_of_dest_, base_, owned_, slot_index_;
  portable::OwnerRef owner_ref_;
  portable::PlacementRef placement_ref_;
  // Per step, kept from forward to backward.
  device::GrowingDeviceBuffer send_pairs_, recv_pairs_, counts_, rows_, owner_buffer_, grads_, grad_pooled_;
  DeviceDistinct received_;  // the keys of the pairs this owner received, de-duplicated
  std::vector<std::size_t> send_counts_, recv_counts_;
  std::uint64_t received_pairs_ = 0;
};

}  // namespace embscale::embedding
