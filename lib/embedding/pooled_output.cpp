#include "embedding/pooled_output.hpp"

#include "core/batch_source.hpp"

namespace embscale::embedding {

PooledOutputExchange::PooledOutputExchange(const LayerSpec& spec, PooledPlan plan)
    : global_batch_(spec.global_batch), plan_(std::move(plan)), comm_(*spec.comm), rank_(spec.comm->rank()),
      ranks_(spec.comm->size()), dim_(static_cast<std::size_t>(spec.dim())),
      slots_(static_cast<std::size_t>(spec.slots())), mine_(samples_of(rank_)),
      group_of_dest_(static_cast<std::size_t>(ranks_), 0), base_(static_cast<std::size_t>(ranks_), 0) {}

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

}  // namespace embscale::embedding
