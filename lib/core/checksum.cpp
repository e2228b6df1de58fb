#include "core/checksum.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace embscale {
namespace {

// xxHash64's constants (odd, with well-spread bits).
constexpr std::uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
constexpr std::uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;
constexpr std::uint64_t kPrime3 = 0x165667B19E3779F9ULL;
constexpr std::uint64_t kPrime4 = 0x85EBCA77C2B2AE63ULL;
constexpr std::uint64_t kPrime5 = 0x27D4EB2F165667C5ULL;

static_assert(std::endian::native == std::endian::little,
              "Checksum64 reads words in native order; the file formats are little-endian");

std::uint64_t load_word(const unsigned char* p) noexcept {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

std::uint64_t round_lane(std::uint64_t lane, std::uint64_t word) noexcept {
  return std::rotl(lane + word * kPrime2, 31) * kPrime1;
}

// A lane folded into the combined value: the lane is mixed once more first, so that lanes that
// differ in high bits only still differ after the fold.
std::uint64_t fold(std::uint64_t acc, std::uint64_t lane) noexcept {
  acc ^= round_lane(0, lane);
  return acc * kPrime1 + kPrime4;
}

std::uint64_t avalanche(std::uint64_t h) noexcept {
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

}  // namespace

Checksum64::Checksum64(std::uint64_t seed) noexcept
    : lanes_{seed + kPrime1 + kPrime2, seed + kPrime2, seed, seed - kPrime1}, seed_(seed) {}

void Checksum64::update(const void* data, std::size_t bytes) noexcept {
  if (bytes == 0) return;
  const auto* p = static_cast<const unsigned char*>(data);
  total_ += bytes;
  if (pending_bytes_ > 0) {
    const std::size_t take = std::min(bytes, kStripeBytes - pending_bytes_);
    std::memcpy(pending_ + pending_bytes_, p, take);
    pending_bytes_ += take;
    p += take;
    bytes -= take;
    if (pending_bytes_ < kStripeBytes) return;
    for (int j = 0; j < 4; ++j) lanes_[j] = round_lane(lanes_[j], load_word(pending_ + 8 * j));
    pending_bytes_ = 0;
  }
  // Whole stripes straight from the input; locals so the compiler keeps the lanes in registers.
  std::uint64_t l0 = lanes_[0], l1 = lanes_[1], l2 = lanes_[2], l3 = lanes_[3];
  for (; bytes >= kStripeBytes; p += kStripeBytes, bytes -= kStripeBytes) {
    l0 = round_lane(l0, load_word(p));
    l1 = round_lane(l1, load_word(p + 8));
    l2 = round_lane(l2, load_word(p + 16));
    l3 = round_lane(l3, load_word(p + 24));
  }
  lanes_[0] = l0;
  lanes_[1] = l1;
  lanes_[2] = l2;
  lanes_[3] = l3;
  std::memcpy(pending_, p, bytes);
  pending_bytes_ = bytes;
}

std::uint64_t Checksum64::value() const noexcept {
  std::uint64_t h;
  if (total_ >= kStripeBytes) {
    h = std::rotl(lanes_[0], 1) + std::rotl(lanes_[1], 7) + std::rotl(lanes_[2], 12) + std::rotl(lanes_[3], 18);
    for (const std::uint64_t lane : lanes_) h = fold(h, lane);
  } else {
    h = seed_ + kPrime5;  // no stripe was ever mixed: the lanes still hold the seed
  }
  h += total_;
  const unsigned char* p = pending_;
  std::size_t left = pending_bytes_;
  for (; left >= 8; p += 8, left -= 8) {
    h ^= round_lane(0, load_word(p));
    h = std::rotl(h, 27) * kPrime1 + kPrime4;
  }
  if (left >= 4) {
    std::uint32_t w;
    std::memcpy(&w, p, sizeof w);
    h ^= std::uint64_t{w} * kPrime1;
    h = std::rotl(h, 23) * kPrime2 + kPrime3;
    p += 4;
    left -= 4;
  }
  for (; left > 0; ++p, --left) {
    h ^= std::uint64_t{*p} * kPrime5;
    h = std::rotl(h, 11) * kPrime1;
  }
  return avalanche(h);
}

std::uint64_t checksum64(const void* data, std::size_t bytes, std::uint64_t seed) noexcept {
  Checksum64 c(seed);
  c.update(data, bytes);
  return c.value();
}

}  // namespace embscale
