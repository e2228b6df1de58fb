// OwnerRule: the owner of a key, as the schemes with a device step state it: a rule of
// portable/step_ref.hpp (key % ranks, a table per slot, row blocks) and the arrays it reads. The
// host routing calls it as a function (rule(key, slot)); a device exchange uploads its arrays and
// hands the kernels the same rule (portable::owner_of), so host and device route alike.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/batch.hpp"
#include "embedding/portable/step_ref.hpp"

namespace embscale::embedding {

class OwnerRule {
 public:
  static OwnerRule modulo(int ranks) {
    OwnerRule rule;
    rule.kind_ = portable::OwnerKind::kModulo;
    rule.ranks_ = ranks;
    return rule;
  }
  // Each layer slot's owner.
  static OwnerRule slot_table(std::vector<std::int32_t> owner_of_slot) {
    OwnerRule rule;
    rule.kind_ = portable::OwnerKind::kSlotTable;
    rule.slot_owner_ = std::move(owner_of_slot);
    return rule;
  }
  // Slot s's keys from slot_offset[s] in blocks of block_rows[s] rows, block b on rank b.
  static OwnerRule row_blocks(std::vector<std::int64_t> slot_offset, std::vector<std::int64_t> block_rows) {
    OwnerRule rule;
    rule.kind_ = portable::OwnerKind::kRowBlocks;
    rule.slot_offset_ = std::move(slot_offset);
    rule.block_rows_ = std::move(block_rows);
    return rule;
  }

  // Slot s on node node_of_slot[s] (ranks_per_node consecutive ranks), its rows in blocks there.
  static OwnerRule node_row_blocks(std::vector<std::int32_t> node_of_slot, int ranks_per_node,
                                   std::vector<std::int64_t> slot_offset, std::vector<std::int64_t> block_rows) {
    OwnerRule rule = row_blocks(std::move(slot_offset), std::move(block_rows));
    rule.kind_ = portable::OwnerKind::kNodeRowBlocks;
    rule.ranks_ = ranks_per_node;
    rule.slot_owner_ = std::move(node_of_slot);
    return rule;
  }
  // For a plan that sends every key to every rank (PooledPlan::every_rank_gets_every_key): the
  // rule is never asked (it would answer rank 0).
  static OwnerRule every_rank() { return modulo(1); }

  int operator()(Key key, std::int32_t slot) const noexcept { return portable::owner_of(ref(), key, slot); }

  // The rule over host pointers into this object.
  portable::OwnerRef ref() const noexcept {
    return {kind_, ranks_, slot_owner_.data(), slot_offset_.data(), block_rows_.data()};
  }
  // The same over copies of the arrays elsewhere (a device's), in this object's order.
  portable::OwnerRef ref(const std::int32_t* slot_owner, const std::int64_t* slot_offset,
                         const std::int64_t* block_rows) const noexcept {
    return {kind_, ranks_, slot_owner, slot_offset, block_rows};
  }
  std::span<const std::int32_t> slot_owner() const noexcept { return slot_owner_; }
  std::span<const std::int64_t> slot_offset() const noexcept { return slot_offset_; }
  std::span<const std::int64_t> block_rows() const noexcept { return block_rows_; }

 private:
  OwnerRule() = default;

  portable::OwnerKind kind_ = portable::OwnerKind::kModulo;
  std::int32_t ranks_ = 1;
  std::vector<std::int32_t> slot_owner_;
  std::vector<std::int64_t> slot_offset_, block_rows_;
};

}  // namespace embscale::embedding
