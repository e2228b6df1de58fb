// The per-key and per-bag rules of the pooled step, written once for the host and the device: who
// owns a key (OwnerRef), where a bag lands in an owner's buffer (PlacementRef), the mean's scale of
// a bag and the stand-in regression's loss of a sample. The host schemes call these through
// embedding/owner_rule.hpp and pooled_output.hpp; the embedding_step kernels call the same
// functions on device copies of the same arrays, so both route, place and score alike.
//
// Plain data: the pointers of a ref point at host memory on the host and at device memory in a
// kernel (the device exchange uploads the arrays once, when the scheme is made).
#pragma once

#include <cstdint>

#include "kv/portable/host_device.hpp"

namespace embscale::embedding::portable {

// The owner rules of the schemes with a device step (the others keep their host functions).
enum class OwnerKind : std::int32_t {
  kModulo = 0,     // key % ranks (HugeCTR's distributed slot, SOK's distributed sparse)
  kSlotTable = 1,  // slot_owner[slot] (whole tables: HugeCTR's localized slot, TorchRec's table-wise)
  kRowBlocks = 2,  // (key - slot_offset[slot]) / block_rows[slot] (TorchRec's row-wise)
  // slot_owner[slot] (the slot's node) x ranks + the row block within the node (TorchRec's
  // table-row-wise; `ranks` is then the ranks per node)
  kNodeRowBlocks = 3,
};

struct OwnerRef {
  OwnerKind kind = OwnerKind::kModulo;
  std::int32_t ranks = 1;                     // kModulo: the ranks; kNodeRowBlocks: per node
  const std::int32_t* slot_owner = nullptr;   // kSlotTable: per layer slot its rank; kNodeRowBlocks: its node
  const std::int64_t* slot_offset = nullptr;  // kRowBlocks, kNodeRowBlocks: first key of each layer slot
  const std::int64_t* block_rows = nullptr;   // kRowBlocks, kNodeRowBlocks: rows per block of each layer slot
};

EMBSCALE_HD inline int owner_modulo(std::int64_t key, int ranks) { return static_cast<int>(key % ranks); }
EMBSCALE_HD inline int owner_row_block(std::int64_t key, std::int64_t slot_offset, std::int64_t block_rows) {
  return static_cast<int>((key - slot_offset) / block_rows);
}

// The rank owning `key` of layer slot `slot`.
EMBSCALE_HD inline int owner_of(const OwnerRef& rule, std::int64_t key, std::int32_t slot) {
  switch (rule.kind) {
    case OwnerKind::kModulo: return owner_modulo(key, rule.ranks);
    case OwnerKind::kSlotTable: return rule.slot_owner[slot];
    case OwnerKind::kRowBlocks: return owner_row_block(key, rule.slot_offset[slot], rule.block_rows[slot]);
    case OwnerKind::kNodeRowBlocks:
      return rule.slot_owner[slot] * rule.ranks + owner_row_block(key, rule.slot_offset[slot], rule.block_rows[slot]);
  }
  return 0;
}

// Where this rank's bag (sample, slot) lands in the owner buffer of rank `dest`
// (PooledOutputExchange::position): the first of this rank's bags there, then sample-major over
// the slots that owner's group pools. slot_index is [group][layer slot], -1 where a group does
// not pool the slot.
struct PlacementRef {
  std::int32_t slots = 0;                        // the layer's slots
  const std::uint64_t* group_of_dest = nullptr;  // per rank
  const std::int64_t* base = nullptr;            // per rank
  const std::int64_t* owned = nullptr;           // per group: the slots it pools
  const std::int32_t* slot_index = nullptr;      // [group][slot]
};

EMBSCALE_HD inline std::int64_t position_of(const PlacementRef& p, int dest, std::int64_t sample, std::int32_t slot) {
  const std::uint64_t g = p.group_of_dest[dest];
  return p.base[dest] + sample * p.owned[g] + p.slot_index[g * static_cast<std::uint64_t>(p.slots) + slot];
}

// A (key, position) pair as the pooled exchange sends it.
struct KeyPosition {
  std::int64_t key;
  std::int64_t position;
};

// The mean combiner's factor of a bag of `size` keys, applied as v * scale (1 for bags of 0 or 1
// key, which are left as they are).
EMBSCALE_HD inline float bag_scale(std::int64_t size) {
  return size <= 1 ? 1.0f : kv::portable::fdiv_rn(1.0f, static_cast<float>(size));
}

// The stand-in regression of one sample's `width` values onto `target`: grad[v] = (value - target)
// / global batch, and the sample's loss sum of (value - target)^2 / 2 in value order from 0 (the
// caller divides the sum over samples, taken in sample order, by the global batch).
// regression_term is value v's part: its gradient, and its term of the loss.
EMBSCALE_HD inline double regression_term(float value, float target, double inv_batch, float& grad) {
  using kv::portable::add_rn;
  using kv::portable::mul_rn;
  const double diff = add_rn(static_cast<double>(value), -static_cast<double>(target));
  grad = static_cast<float>(mul_rn(diff, inv_batch));
  return mul_rn(mul_rn(0.5, diff), diff);
}

EMBSCALE_HD inline double regression_sample(const float* values, std::uint64_t width, float target, double inv_batch,
                                            float* grad) {
  double loss = 0.0;
  for (std::uint64_t v = 0; v < width; ++v)
    loss = kv::portable::add_rn(loss, regression_term(values[v], target, inv_batch, grad[v]));
  return loss;
}

// The regression target of a sample from its first label: +1/2 for a positive, -1/2 otherwise.
EMBSCALE_HD inline float regression_target_of(float label) { return label > 0.5f ? 0.5f : -0.5f; }

}  // namespace embscale::embedding::portable
