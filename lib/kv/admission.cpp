#include "kv/admission.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace embscale::kv {
namespace {

constexpr std::uint64_t kRowStride = 0x9e3779b97f4a7c15ULL;  // the golden ratio: rows' key offsets
constexpr std::uint64_t kSaltMix = 0x5bd1e9955bd1e995ULL;

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
    : depth_(o.depth),
      width_(ceil_pow2(o.cells_per_slot * static_cast<double>(bucket_capacity))),
      max_(static_cast<std::uint8_t>(o.max_count)),
      period_(static_cast<std::uint64_t>(std::llround(o.aging_factor * static_cast<double>(bucket_capacity)))),
      salt_(mix64(o.seed ^ kSaltMix)),
      buckets_(buckets),
      counters_(static_cast<std::size_t>(buckets * o.depth * width_), 0),
      sightings_(static_cast<std::size_t>(buckets), 0) {
  EMBSCALE_EXPECTS(buckets >= 1 && (buckets & (buckets - 1)) == 0, "a power-of-two number of buckets");
}

std::size_t BankedSketch::bank_of(std::uint64_t key) const noexcept {
  return static_cast<std::size_t>(mix64(key) & static_cast<std::uint64_t>(buckets_ - 1));
}

std::size_t BankedSketch::cell(std::uint64_t key, int row) const noexcept {
  const std::uint64_t h = mix64((key + static_cast<std::uint64_t>(row + 1) * kRowStride) ^ salt_);
  return static_cast<std::size_t>(row) * static_cast<std::size_t>(width_) +
         static_cast<std::size_t>(h & static_cast<std::uint64_t>(width_ - 1));
}

void BankedSketch::record(std::uint64_t key) noexcept {
  const std::size_t bank = bank_of(key);
  std::uint8_t* counters = counters_.data() + bank * static_cast<std::size_t>(depth_ * width_);
  for (int r = 0; r < depth_; ++r) {
    std::uint8_t& c = counters[cell(key, r)];
    if (c < max_) ++c;
  }
  if (period_ != 0 && ++sightings_[bank] >= period_) halve(bank);
}

int BankedSketch::estimate(std::uint64_t key) const noexcept {
  const std::uint8_t* counters = counters_.data() + bank_of(key) * static_cast<std::size_t>(depth_ * width_);
  int least = max_;
  for (int r = 0; r < depth_; ++r) least = std::min<int>(least, counters[cell(key, r)]);
  return least;
}

void BankedSketch::halve(std::size_t bank) noexcept {
  std::uint8_t* counters = counters_.data() + bank * static_cast<std::size_t>(depth_ * width_);
  for (std::int64_t i = 0; i < depth_ * width_; ++i) counters[i] = static_cast<std::uint8_t>(counters[i] >> 1);
  sightings_[bank] = 0;
}

void BankedSketch::grow(std::int64_t buckets) {
  EMBSCALE_EXPECTS(buckets >= buckets_ && buckets % buckets_ == 0 && (buckets & (buckets - 1)) == 0,
                   "banks grow by a power-of-two factor");
  if (buckets == buckets_) return;
  const auto bank_cells = static_cast<std::size_t>(depth_ * width_);
  std::vector<std::uint8_t> counters(static_cast<std::size_t>(buckets) * bank_cells);
  std::vector<std::uint32_t> sightings(static_cast<std::size_t>(buckets));
  // Bucket b of the new count holds keys that were in bucket b & (old - 1): its parent.
  for (std::int64_t b = 0; b < buckets; ++b) {
    const auto parent = static_cast<std::size_t>(b & (buckets_ - 1));
    std::copy_n(counters_.begin() + static_cast<long>(parent * bank_cells), bank_cells,
                counters.begin() + static_cast<long>(static_cast<std::size_t>(b) * bank_cells));
    sightings[static_cast<std::size_t>(b)] = sightings_[parent];
  }
  counters_ = std::move(counters);
  sightings_ = std::move(sightings);
  buckets_ = buckets;
}

void BankedSketch::clear() noexcept {
  std::fill(counters_.begin(), counters_.end(), std::uint8_t{0});
  std::fill(sightings_.begin(), sightings_.end(), 0u);
}

std::size_t BankedSketch::memory_bytes() const noexcept {
  return counters_.size() * sizeof(std::uint8_t) + sightings_.size() * sizeof(std::uint32_t);
}

}  // namespace detail

KCountAdmission::KCountAdmission(const AdmissionOptions& o, std::int64_t bucket_capacity, std::int64_t buckets)
    : SketchAdmission(o, bucket_capacity, buckets), k_(o.threshold_k) {}

bool KCountAdmission::admit(std::uint64_t key, Placement placement, std::uint64_t) noexcept {
  sketch_.record(key);
  return placement != Placement::kRefused && sketch_.estimate(key) >= k_;
}

bool TinyLfuAdmission::admit(std::uint64_t key, Placement placement, std::uint64_t victim) noexcept {
  sketch_.record(key);
  switch (placement) {
    case Placement::kFreeSlot: return true;
    case Placement::kEvict: return sketch_.estimate(key) > sketch_.estimate(victim);
    case Placement::kRefused: return false;
  }
  return false;
}

AdmissionFilter::AdmissionFilter(const AdmissionOptions& o, std::int64_t bucket_capacity, std::int64_t buckets) {
  check_admission_options(o);
  switch (o.kind) {  // no default: a new kind is a -Wswitch warning here
    case AdmissionOptions::Kind::kNone: break;
    case AdmissionOptions::Kind::kKCount: filter_.emplace<KCountAdmission>(o, bucket_capacity, buckets); break;
    case AdmissionOptions::Kind::kTinyLfu: filter_.emplace<TinyLfuAdmission>(o, bucket_capacity, buckets); break;
  }
}

void AdmissionFilter::record(std::uint64_t key) noexcept {
  if (auto* k = std::get_if<KCountAdmission>(&filter_)) k->record_hit(key);
  else if (auto* t = std::get_if<TinyLfuAdmission>(&filter_)) t->record_hit(key);
}

bool AdmissionFilter::admit(std::uint64_t key, Placement placement, std::uint64_t victim) noexcept {
  if (auto* k = std::get_if<KCountAdmission>(&filter_)) return k->admit(key, placement, victim);
  if (auto* t = std::get_if<TinyLfuAdmission>(&filter_)) return t->admit(key, placement, victim);
  return placement != Placement::kRefused;
}

void AdmissionFilter::resize(std::int64_t buckets) {
  if (auto* k = std::get_if<KCountAdmission>(&filter_)) k->sketch().grow(buckets);
  else if (auto* t = std::get_if<TinyLfuAdmission>(&filter_)) t->sketch().grow(buckets);
}

void AdmissionFilter::clear() noexcept {
  if (auto* k = std::get_if<KCountAdmission>(&filter_)) k->sketch().clear();
  else if (auto* t = std::get_if<TinyLfuAdmission>(&filter_)) t->sketch().clear();
}

std::size_t AdmissionFilter::memory_bytes() const noexcept {
  if (const auto* k = std::get_if<KCountAdmission>(&filter_)) return k->sketch().memory_bytes();
  if (const auto* t = std::get_if<TinyLfuAdmission>(&filter_)) return t->sketch().memory_bytes();
  return 0;
}

int AdmissionFilter::estimate(std::uint64_t key) const noexcept {
  if (const auto* k = std::get_if<KCountAdmission>(&filter_)) return k->sketch().estimate(key);
  if (const auto* t = std::get_if<TinyLfuAdmission>(&filter_)) return t->sketch().estimate(key);
  return 0;
}

}  // namespace embscale::kv
