#include "kv/admission.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace embscale::kv {
namespace {

constexpr std::uint64_t kSaltMix = 0x5bd1e9955bd1e995ULL;
constexpr int kCountersPerBlock = 64;
constexpr int kBlockShift = 48;  // the block index comes from h's top 16 bits; rows use 6 bits
                                 // each of the low 48 (depth <= 8)

std::int64_t ceil_pow2(double x) {
  std::int64_t p = 1;
  while (static_cast<double>(p) < x) p <<= 1;
  return p;
}

}  // namespace

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

namespace detail {

BankedSketch::BankedSketch(const AdmissionOptions& o, std::int64_t bucket_capacity, std::int64_t buckets)
    : depth_(o.depth), per_row_(static_cast<unsigned>(kCountersPerBlock / o.depth)),
      blocks_(ceil_pow2(static_cast<double>(o.depth) * o.cells_per_slot * static_cast<double>(bucket_capacity) /
                        kCountersPerBlock)),
      max_(static_cast<std::uint8_t>(o.max_count)), conservative_(o.conservative_update),
      period_(static_cast<std::uint64_t>(std::llround(o.aging_factor * static_cast<double>(bucket_capacity)))),
      salt_(mix64(o.seed ^ kSaltMix)), buckets_(buckets),
      blocks_of_banks_(static_cast<std::size_t>(buckets * blocks_), Block{}),
      sightings_(static_cast<std::size_t>(buckets), 0) {
  EMBSCALE_EXPECTS(buckets >= 1 && (buckets & (buckets - 1)) == 0, "a power-of-two number of buckets");
  EMBSCALE_EXPECTS(depth_ >= 1 && depth_ <= 8, "depth in [1, 8]: rows take 6 bits each of the hash's low 48");
  EMBSCALE_EXPECTS(blocks_ <= (std::int64_t{1} << (64 - kBlockShift)), "blocks per bank within the hash's top bits");
}

BankedSketch::Cells BankedSketch::cells(std::uint64_t key) const noexcept {
  Cells c;
  c.bank = static_cast<std::size_t>(mix64(key) & static_cast<std::uint64_t>(buckets_ - 1));
  const std::uint64_t h = mix64(key ^ salt_);
  const auto block = static_cast<std::size_t>((h >> kBlockShift) & static_cast<std::uint64_t>(blocks_ - 1));
  c.block = c.bank * static_cast<std::size_t>(blocks_) + block;
  for (int r = 0; r < depth_; ++r) {
    const auto bits = static_cast<unsigned>((h >> (6 * r)) & 63);
    c.at[r] = static_cast<unsigned>(r) * per_row_ + ((bits * per_row_) >> 6);
  }
  return c;
}

bool BankedSketch::record(std::uint64_t key) noexcept {
  const Cells c = cells(key);
  std::uint8_t* counters = blocks_of_banks_[c.block].counters;
  if (conservative_) {
    std::uint8_t least = max_;
    for (int r = 0; r < depth_; ++r) least = std::min(least, counters[c.at[r]]);
    if (least < max_)
      for (int r = 0; r < depth_; ++r)
        if (counters[c.at[r]] == least) ++counters[c.at[r]];
  } else {
    for (int r = 0; r < depth_; ++r) {
      std::uint8_t& counter = counters[c.at[r]];
      if (counter < max_) ++counter;
    }
  }
  if (period_ == 0 || ++sightings_[c.bank] < period_) return false;
  halve(c.bank);
  return true;
}

int BankedSketch::estimate(std::uint64_t key) const noexcept {
  const Cells c = cells(key);
  const std::uint8_t* counters = blocks_of_banks_[c.block].counters;
  int least = max_;
  for (int r = 0; r < depth_; ++r) least = std::min<int>(least, counters[c.at[r]]);
  return least;
}

void BankedSketch::prefetch(std::uint64_t key) const noexcept {
  const std::uint64_t h = mix64(key ^ salt_);
  const auto bank = static_cast<std::size_t>(mix64(key) & static_cast<std::uint64_t>(buckets_ - 1));
  const auto block = static_cast<std::size_t>((h >> kBlockShift) & static_cast<std::uint64_t>(blocks_ - 1));
  __builtin_prefetch(&blocks_of_banks_[bank * static_cast<std::size_t>(blocks_) + block], 1);
}

void BankedSketch::halve(std::size_t bank) noexcept {
  Block* first = blocks_of_banks_.data() + bank * static_cast<std::size_t>(blocks_);
  for (std::int64_t b = 0; b < blocks_; ++b)
    for (std::uint8_t& counter : first[b].counters) counter = static_cast<std::uint8_t>(counter >> 1);
  sightings_[bank] = 0;
}

void BankedSketch::grow(std::int64_t buckets) {
  EMBSCALE_EXPECTS(buckets >= buckets_ && buckets % buckets_ == 0 && (buckets & (buckets - 1)) == 0,
                   "banks grow by a power-of-two factor");
  if (buckets == buckets_) return;
  const auto bank_blocks = static_cast<std::size_t>(blocks_);
  std::vector<Block> blocks(static_cast<std::size_t>(buckets) * bank_blocks);
  std::vector<std::uint32_t> sightings(static_cast<std::size_t>(buckets));
  // Bucket b of the new count holds keys that were in bucket b & (old - 1): its parent.
  for (std::int64_t b = 0; b < buckets; ++b) {
    const auto parent = static_cast<std::size_t>(b & (buckets_ - 1));
    std::copy_n(blocks_of_banks_.begin() + static_cast<long>(parent * bank_blocks), bank_blocks,
                blocks.begin() + static_cast<long>(static_cast<std::size_t>(b) * bank_blocks));
    sightings[static_cast<std::size_t>(b)] = sightings_[parent];
  }
  blocks_of_banks_ = std::move(blocks);
  sightings_ = std::move(sightings);
  buckets_ = buckets;
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
  switch (kind_) {  // no default: a new kind is a -Wswitch warning here
    case AdmissionOptions::Kind::kNone: return true;
    case AdmissionOptions::Kind::kKCount: return sketch_.estimate(key) >= k_;
    case AdmissionOptions::Kind::kTinyLfu:
      return placement == Placement::kFreeSlot || sketch_.estimate(key) > sketch_.estimate(victim);
  }
  return true;
}

void AdmissionFilter::resize(std::int64_t buckets) {
  if (enabled()) sketch_.grow(buckets);
}

void AdmissionFilter::clear() noexcept {
  if (enabled()) sketch_.clear();
}

std::size_t AdmissionFilter::memory_bytes() const noexcept { return enabled() ? sketch_.memory_bytes() : 0; }

}  // namespace embscale::kv
