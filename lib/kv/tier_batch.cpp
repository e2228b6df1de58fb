#include "kv/tier_batch.hpp"

#include <unordered_map>

namespace embscale::kv {

DistinctKeys distinct_keys(std::span<const std::uint64_t> keys, bool keep_last) {
  DistinctKeys d;
  d.slot_of.resize(keys.size());
  std::unordered_map<std::uint64_t, std::uint32_t> slot;
  slot.reserve(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto [it, fresh] = slot.try_emplace(keys[i], static_cast<std::uint32_t>(d.keys.size()));
    if (fresh) {
      d.keys.push_back(keys[i]);
      d.source.push_back(static_cast<std::uint32_t>(i));
    } else if (keep_last) {
      d.source[it->second] = static_cast<std::uint32_t>(i);
    }
    d.slot_of[i] = it->second;
  }
  return d;
}

void for_each_entry_of(const HostTable& tier, const EntryVisitor& visit) {
  std::vector<std::uint64_t> keys, scores;
  std::vector<float> values;
  constexpr std::int64_t kSlots = 4096;
  for (std::int64_t offset = 0; offset < tier.capacity(); offset += kSlots)
    if (tier.export_batch(offset, kSlots, keys, values, scores) > 0) visit(keys, values, scores);
}

}  // namespace embscale::kv
