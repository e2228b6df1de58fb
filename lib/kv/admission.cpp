#include "kv/admission.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace embscale::kv {
namespace {

constexpr std::uint64_t kSaltMix = portable::kSketchSaltMix;
constexpr int kCountersPerBlock = static_cast<int>(portable::kSketchCountersPerBlock);
constexpr int kBlockShift = static_cast<int>(portable::kSketchBlockShift);

std::int64_t ceil_pow2(double x) {
  std::int64_t p = 1;
  while (static_cast<double>(p) < x) p <<= 1;
  return p;
}

}  // namespace

portable::FilterKind portable_filter_kind(AdmissionOptions::Kind kind) noexcept {
  switch (kind) {  // no default: a new kind is a -Wswitch warning here
    case AdmissionOptions::Kind::kNone: return portable::FilterKind::kNone;
    case AdmissionOptions::Kind::kKCount: return portable::FilterKind::kKCount;
    case AdmissionOptions::Kind::kTinyLfu: return portable::FilterKind::kTinyLfu;
  }
  return portable::FilterKind::kNone;
}

std::string to_string(AdmissionOptions::Kind kind) {
  switch (kind) {
    case AdmissionOptions::Kind::kNone: return "none";
    case AdmissionOptions::Kind::kKCount: return "k_count";
    case AdmissionOptions::Kind::kTinyLfu: return "tiny_lfu";
  }
  return "?";
}

void check_admission_options(const AdmissionOptions& o) {
  const auto fail = [](const std::string& field, const std::string& expected, const std::string& got) {
    throw InputError("table options: admission." + field + ": expected " + expected + ", got " + got);
  };
  if (to_string(o.kind) == "?")  // not an enumerator: to_string's switch lists every kind
    fail("kind", "none, k_count or tiny_lfu", std::to_string(static_cast<int>(o.kind)));
  if (o.max_count < 1 || o.max_count > 255) fail("max_count", "an integer in [1, 255]", std::to_string(o.max_count));
  if (o.threshold_k < 1 || o.threshold_k > o.max_count)
    fail("threshold_k", "an integer in [1, max_count (" + std::to_string(o.max_count) + ")]",
         std::to_string(o.threshold_k));
  if (o.depth < 1 || o.depth > 8) fail("depth", "an integer in [1, 8]", std::to_string(o.depth));
  if (!(o.cells_per_slot > 0.0 && o.cells_per_slot <= 64.0))
    fail("cells_per_slot", "a number in (0, 64]", std::to_string(o.cells_per_slot));
  if (!(o.aging_factor >= 0.0 && o.aging_factor <= 1e6))
    fail("aging_factor", "0 (never) or a number in (0, 1e6]", std::to_string(o.aging_factor));
}

namespace detail {}  // namespace detail

portable::SketchRef sketch_layout(const AdmissionOptions& o, std::int64_t bucket_capacity, std::int64_t buckets) {
  EMBSCALE_EXPECTS(buckets >= 1 && (buckets & (buckets - 1)) == 0, "a power-of-two number of buckets");
  EMBSCALE_EXPECTS(o.depth >= 1 && o.depth <= 8, "depth in [1, 8]: rows take 6 bits each of the hash's low 48");
  portable::SketchRef layout;
  layout.buckets = static_cast<std::uint64_t>(buckets);
  layout.blocks = static_cast<std::uint64_t>(ceil_pow2(static_cast<double>(o.depth) * o.cells_per_slot *
                                                       static_cast<double>(bucket_capacity) / kCountersPerBlock));
  layout.depth = static_cast<std::uint32_t>(o.depth);
  layout.per_row = static_cast<std::uint32_t>(kCountersPerBlock / o.depth);
  layout.max_count = static_cast<std::uint32_t>(o.max_count);
  layout.period = static_cast<std::uint64_t>(std::llround(o.aging_factor * static_cast<double>(bucket_capacity)));
  layout.salt = mix64(o.seed ^ kSaltMix);
  layout.conservative = o.conservative_update;
  EMBSCALE_EXPECTS(layout.blocks <= (std::uint64_t{1} << (64 - kBlockShift)),
                   "blocks per bank within the hash's top bits");
  return layout;
}

namespace detail {

BankedSketch::BankedSketch(const AdmissionOptions& o, std::int64_t bucket_capacity, std::int64_t buckets)
    : layout_(sketch_layout(o, bucket_capacity, buckets)),
      blocks_of_banks_(static_cast<std::size_t>(layout_.buckets * layout_.blocks), Block{}),
      sightings_(static_cast<std::size_t>(buckets), 0) {}

portable::SketchRef BankedSketch::portable_view() const noexcept {
  portable::SketchRef view = layout_;
  view.counters = blocks_of_banks_.empty() ? nullptr : blocks_of_banks_.front().counters;
  view.sightings = sightings_.data();
  return view;
}

bool BankedSketch::record(std::uint64_t key) noexcept { return portable_view().record(key); }

int BankedSketch::estimate(std::uint64_t key) const noexcept { return portable_view().estimate(key); }

void BankedSketch::prefetch(std::uint64_t key) const noexcept {
  __builtin_prefetch(&blocks_of_banks_[static_cast<std::size_t>(layout_.cells(key).block)], 1);
}

void BankedSketch::grow(std::int64_t buckets) {
  const auto old = static_cast<std::int64_t>(layout_.buckets);
  EMBSCALE_EXPECTS(buckets >= old && buckets % old == 0 && (buckets & (buckets - 1)) == 0,
                   "banks grow by a power-of-two factor");
  if (buckets == old) return;
  const auto bank_blocks = static_cast<std::size_t>(layout_.blocks);
  std::vector<Block> blocks(static_cast<std::size_t>(buckets) * bank_blocks);
  std::vector<std::uint32_t> sightings(static_cast<std::size_t>(buckets));
  // Bucket b of the new count holds keys that were in bucket b & (old - 1): its parent.
  for (std::int64_t b = 0; b < buckets; ++b) {
    const auto parent = static_cast<std::size_t>(b & (old - 1));
    std::copy_n(blocks_of_banks_.begin() + static_cast<long>(parent * bank_blocks), bank_blocks,
                blocks.begin() + static_cast<long>(static_cast<std::size_t>(b) * bank_blocks));
    sightings[static_cast<std::size_t>(b)] = sightings_[parent];
  }
  blocks_of_banks_ = std::move(blocks);
  sightings_ = std::move(sightings);
  layout_.buckets = static_cast<std::uint64_t>(buckets);
}

void BankedSketch::clear() noexcept {
  std::fill(blocks_of_banks_.begin(), blocks_of_banks_.end(), Block{});
  std::fill(sightings_.begin(), sightings_.end(), 0u);
}

std::size_t BankedSketch::memory_bytes() const noexcept {
  return blocks_of_banks_.size() * sizeof(Block) + sightings_.size() * sizeof(std::uint32_t);
}

}  // namespace detail

AdmissionFilter::AdmissionFilter(const AdmissionOptions& o, std::int64_t bucket_capacity, std::int64_t buckets) {
  check_admission_options(o);
  kind_ = o.kind;
  k_ = o.threshold_k;
  if (enabled()) sketch_ = detail::BankedSketch(o, bucket_capacity, buckets);
}

bool AdmissionFilter::admits(std::uint64_t key, Placement placement, std::uint64_t victim) const noexcept {
  if (placement == Placement::kRefused) return false;
  if (!enabled()) return true;
  return portable::filter_admits(portable_filter_kind(kind_), k_, sketch_.portable_view(), key,
                                 placement == Placement::kFreeSlot, victim);
}

void AdmissionFilter::resize(std::int64_t buckets) {
  if (enabled()) sketch_.grow(buckets);
}

void AdmissionFilter::clear() noexcept {
  if (enabled()) sketch_.clear();
}

std::size_t AdmissionFilter::memory_bytes() const noexcept { return enabled() ? sketch_.memory_bytes() : 0; }

}  // namespace embscale::kv
