#include "embedding/pooled_output.hpp"

#include <algorithm>

#include "core/batch_source.hpp"
#include "core/error.hpp"
#include "embedding/device_step_family.hpp"

namespace embscale::embedding {

PooledOutputExchange::PooledOutputExchange(const LayerSpec& spec, PooledPlan plan)
    : global_batch_(spec.global_batch), plan_(std::move(plan)), comm_(*spec.comm), rank_(spec.comm->rank()),
      ranks_(spec.comm->size()), dim_(static_cast<std::size_t>(spec.dim())),
      slots_(static_cast<std::size_t>(spec.slots())), mine_(samples_of(rank_)),
      group_of_dest_(static_cast<std::size_t>(ranks_), 0), base_(static_cast<std::size_t>(ranks_), 0) {
  if (spec.context.on_host()) return;
  EMBSCALE_EXPECTS(spec.device_library != nullptr, "a device layer has its library");
  library_ = spec.device_library;
  step_ = &embedding_step_family(*library_);
  stream_ = spec.context.stream;
  device_blocks_ = std::make_unique<device::GrowingDeviceBuffer>(*library_);
  device_segments_ = std::make_unique<device::GrowingDeviceBuffer>(*library_);
}

std::size_t PooledOutputExchange::samples_of(int rank) const noexcept {
  return static_cast<std::size_t>(sample_share_of(global_batch_, rank, ranks_).count);
}

void PooledOutputExchange::index_groups() {
  slot_index_.clear();
  owned_.clear();
  for (const auto& owned : plan_.owner_slots) {
    const std::size_t first = slot_index_.size();
    slot_index_.resize(first + slots_, -1);
    for (std::size_t t = 0; t < owned.size(); ++t)
      slot_index_[first + static_cast<std::size_t>(owned[t])] = static_cast<std::int32_t>(t);
    owned_.push_back(static_cast<std::int64_t>(owned.size()));
  }
}

std::unique_ptr<PooledOutputExchange> make_pooled_output(const LayerSpec& spec, PooledPlan plan, std::size_t width) {
  switch (plan.output) {
    case PooledOutput::kReduceScatter: return make_reduce_scatter_output(spec, std::move(plan), width);
    case PooledOutput::kAllToAll: return make_all_to_all_output(spec, std::move(plan), width);
    case PooledOutput::kNodeThenCross: return make_node_then_cross_output(spec, std::move(plan), width);
  }
  throw Error("an unknown pooled output");
}

void PooledOutputExchange::upload_segments() {
  if (!library_) return;
  device_segments_->assign(std::span<const std::uint64_t>(segments_), stream_);
  library_->check(library_->functions().stream_synchronize(stream_), "uploading the output's copy segments");
}

std::span<float> PooledOutputExchange::layer_buffer(std::vector<float>& host,
                                                    std::unique_ptr<device::GrowingDeviceBuffer>& device,
                                                    std::size_t n) {
  if (!library_) {
    host.resize(n);
    return host;
  }
  if (!device) device = std::make_unique<device::GrowingDeviceBuffer>(*library_);
  return {device->reserve_for<float>(n), n};
}

void PooledOutputExchange::unpack_blocks(std::span<float> pooled) {
  const std::span<float> from = blocks();
  const std::size_t segments = segments_.size() / 3;
  if (library_) {
    library_->check(step_->embedding_step_copy_segments(static_cast<const std::uint64_t*>(device_segments_->data()),
                                                        segments, 0, from.data(), pooled.data(), stream_),
                    "embedding_step copy_segments");
    return;
  }
  for (std::size_t i = 0; i < segments; ++i) {
    const std::uint64_t* s = segments_.data() + 3 * i;
    std::copy_n(from.data() + s[0], s[2], pooled.data() + s[1]);
  }
}

std::span<const float> PooledOutputExchange::pack_blocks(std::span<const float> grad) {
  const std::span<float> to = blocks();
  const std::size_t segments = segments_.size() / 3;
  if (library_) {
    library_->check(step_->embedding_step_copy_segments(static_cast<const std::uint64_t*>(device_segments_->data()),
                                                        segments, 1, grad.data(), to.data(), stream_),
                    "embedding_step copy_segments");
    return to;
  }
  for (std::size_t i = 0; i < segments; ++i) {
    const std::uint64_t* s = segments_.data() + 3 * i;
    std::copy_n(grad.data() + s[1], s[2], to.data() + s[0]);
  }
  return to;
}

}  // namespace embscale::embedding
