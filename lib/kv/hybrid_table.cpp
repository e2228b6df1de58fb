#include "kv/hybrid_table.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace embscale::kv {
namespace {

// The largest bucket_capacity x 2^k not above `slots` (what a HostTable can reach), or 0.
std::int64_t reachable_slots(std::int64_t slots, std::int64_t bucket_capacity) {
  if (slots < bucket_capacity) return 0;
  std::int64_t buckets = 1;
  while (buckets * 2 * bucket_capacity <= slots) buckets *= 2;
  return buckets * bucket_capacity;
}

// The smallest bucket_capacity x 2^k not below `slots`.
std::int64_t covering_slots(std::int64_t slots, std::int64_t bucket_capacity) {
  std::int64_t buckets = 1;
  while (buckets * bucket_capacity < slots) buckets *= 2;
  return buckets * bucket_capacity;
}

std::int64_t fast_slots_of(const TableOptions& o, const HybridOptions& h) {
  check_options(o);
  if (h.fast_row_bytes <= 0)
    throw InputError("hybrid table: fast_row_bytes must be > 0 (the bytes of rows kept in memory), got " +
                     std::to_string(h.fast_row_bytes));
  const std::int64_t width = o.dim + (o.training ? o.optimizer_state_width : 0);
  const auto row_bytes = width * static_cast<std::int64_t>(value_bytes(o.value_type));
  const std::int64_t fast = reachable_slots(std::min(h.fast_row_bytes / row_bytes, o.max_capacity), o.bucket_capacity);
  if (fast == 0)
    throw InputError("hybrid table: fast_row_bytes " + std::to_string(h.fast_row_bytes) + " holds fewer rows (" +
                     std::to_string(h.fast_row_bytes / row_bytes) + " of " + std::to_string(row_bytes) +
                     " bytes) than one bucket (" + std::to_string(o.bucket_capacity) + ")");
  return fast;
}

TableOptions tier_options(TableOptions o, std::int64_t max_capacity, double share, std::string directory) {
  const std::int64_t initial = o.init_capacity ? o.init_capacity : o.max_capacity;
  o.num_embeddings = o.num_embeddings ? o.num_embeddings : o.max_capacity;  // the whole table's, for the initializer
  o.max_capacity = max_capacity;
  o.init_capacity = std::clamp<std::int64_t>(static_cast<std::int64_t>(static_cast<double>(initial) * share),
                                             o.bucket_capacity, max_capacity);
  o.rows_directory = std::move(directory);
  return o;
}

}  // namespace

HybridTable::HybridTable(TableOptions options, HybridOptions hybrid)
    : HybridTable(options, hybrid, fast_slots_of(options, hybrid)) {}

HybridTable::HybridTable(const TableOptions& options, const HybridOptions& hybrid, std::int64_t fast_slots)
    : fast_share_(static_cast<double>(fast_slots) / static_cast<double>(options.max_capacity)),
      fast_(tier_options(options, fast_slots, fast_share_, "")),
      slow_(tier_options(
          options,
          covering_slots(std::max(options.max_capacity - fast_slots, options.bucket_capacity), options.bucket_capacity),
          1.0 - fast_share_, hybrid.slow_directory)) {
  if (fast_share_ < 1.0 && hybrid.slow_directory.empty())
    throw InputError("hybrid table: the rows beyond fast_row_bytes need slow_directory (a directory for their file)");
}

bool HybridTable::in_fast_tier(std::uint64_t key) const noexcept {
  // The top 53 bits as a fraction in [0, 1): independent of the bucket bits (the low bits of mix64).
  const double u = static_cast<double>(hash_combine(kPlacementSalt, key) >> 11) * 0x1.0p-53;
  return u < fast_share_;
}

std::array<SubBatch, 2> HybridTable::split(std::span<const std::uint64_t> keys) const {
  std::array<SubBatch, 2> parts;
  for (std::size_t i = 0; i < keys.size(); ++i)
    parts[in_fast_tier(keys[i]) ? 0 : 1].add(static_cast<std::uint32_t>(i), keys[i]);
  return parts;
}

namespace {

// Runs `call(tier, part)` on each tier's non-empty part of the batch, fast tier first, and sums
// what the calls did.
template <typename Tier, typename Call>
CallStats on_each_tier(std::array<SubBatch, 2>& parts, Tier& fast, Tier& slow, Call call) {
  CallStats stats;
  for (std::size_t t = 0; t < 2; ++t)
    if (parts[t].size() != 0) stats += call(t == 0 ? fast : slow, parts[t]);
  return stats;
}

}  // namespace

CallStats HybridTable::find(std::span<const std::uint64_t> keys, std::span<float> values,
                            std::span<std::uint8_t> founds, std::span<std::uint64_t> scores) const {
  const auto w = static_cast<std::size_t>(row_width());
  auto parts = split(keys);
  return on_each_tier(parts, fast_, slow_, [&](const HostTable& tier, SubBatch& part) {
    part.rows.resize(part.size() * w);
    std::vector<std::uint8_t> found(part.size());
    std::vector<std::uint64_t> part_scores(scores.empty() ? 0 : part.size());
    const CallStats stats = tier.find(part.keys, part.rows, found, part_scores);
    part.scatter_rows(values, w, found);
    for (std::size_t j = 0; j < part.size(); ++j) {
      founds[part.positions[j]] = found[j];
      if (!scores.empty() && found[j]) scores[part.positions[j]] = part_scores[j];
    }
    return stats;
  });
}

CallStats HybridTable::find_or_insert(std::span<const std::uint64_t> keys, std::span<float> values,
                                      std::span<std::uint8_t> founds) {
  const auto w = static_cast<std::size_t>(row_width());
  auto parts = split(keys);
  return on_each_tier(parts, fast_, slow_, [&](HostTable& tier, SubBatch& part) {
    part.rows.resize(part.size() * w);
    std::vector<std::uint8_t> found(part.size());
    const CallStats stats = tier.find_or_insert(part.keys, part.rows, found);
    part.scatter_rows(values, w);
    if (!founds.empty())
      for (std::size_t j = 0; j < part.size(); ++j) founds[part.positions[j]] = found[j];
    return stats;
  });
}

CallStats HybridTable::insert_or_assign(std::span<const std::uint64_t> keys, std::span<const float> values,
                                        std::span<const std::uint64_t> scores) {
  const auto w = static_cast<std::size_t>(row_width());
  auto parts = split(keys);
  return on_each_tier(parts, fast_, slow_, [&](HostTable& tier, SubBatch& part) {
    part.gather_rows(values, w);
    std::vector<std::uint64_t> part_scores;
    if (!scores.empty())
      for (const auto p : part.positions) part_scores.push_back(scores[p]);
    return tier.insert_or_assign(part.keys, part.rows, part_scores);
  });
}

CallStats HybridTable::erase(std::span<const std::uint64_t> keys) {
  auto parts = split(keys);
  CallStats stats = fast_.erase(parts[0].keys);
  stats += slow_.erase(parts[1].keys);
  return stats;
}

CallStats HybridTable::restore(std::span<const std::uint64_t> keys, std::span<const float> values,
                               std::span<const std::uint64_t> scores) {
  const auto w = static_cast<std::size_t>(row_width());
  EMBSCALE_EXPECTS(values.size() == keys.size() * w && scores.size() == keys.size(), "a row and a score per key");
  auto parts = split(keys);
  CallStats stats;
  for (std::size_t t = 0; t < 2; ++t) {
    SubBatch& part = parts[t];
    if (part.size() == 0) continue;
    part.gather_rows(values, w);
    std::vector<std::uint64_t> part_scores;
    for (const auto position : part.positions) part_scores.push_back(scores[position]);
    stats += (t == 0 ? fast_ : slow_).restore(part.keys, part.rows, part_scores);
  }
  return stats;
}

void HybridTable::for_each_entry(const EntryVisitor& visit) const {
  for_each_entry_of(fast_, visit);
  for_each_entry_of(slow_, visit);
}

}  // namespace embscale::kv
