#include "embedding/key_router.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace embscale::embedding {
namespace {

constexpr std::size_t kAhead = 16;  // keys between a home slot's prefetch and its probe
constexpr std::size_t kRing = 32;   // home slots in flight: a power of two above kAhead
static_assert(std::has_single_bit(kRing) && kRing > kAhead, "the ring must hold kAhead homes and wrap by a mask");

// Error path only: names the first negative key and where it is.
[[noreturn]] void throw_negative_key(std::span<const Key> keys) {
  const auto it = std::find_if(keys.begin(), keys.end(), [](Key k) { return k < 0; });
  throw Error("route: keys must be non-negative, got " + std::to_string(*it) + " at batch position " +
              std::to_string(it - keys.begin()));
}

}  // namespace

std::span<const Key> KeyRouter::collect_distinct(std::span<const Key> keys, int ranks, Deduplication dedup,
                                                 RoutedKeys& out) {
  EMBSCALE_EXPECTS(ranks >= 1, "route: ranks must be at least 1");
  // UINT32_MAX itself stays free, so that every index and count fits the inverse's uint32.
  EMBSCALE_EXPECTS(keys.size() < std::numeric_limits<std::uint32_t>::max(),
                   "route: too many keys in one batch for 32-bit indices");
  const std::size_t n = keys.size();
  out.inverse.resize(n);
  if (dedup == Deduplication::kOff) {
    Key any_negative = 0;  // sign bit set iff some key is negative; a branch-free, vectorised test
    for (const Key k : keys) any_negative |= k;
    if (any_negative < 0) throw_negative_key(keys);
    return keys;
  }

  // Capacity: the power of two at or above 2n (at least 16), so linear probing runs short.
  const std::size_t capacity = std::bit_ceil(std::max<std::size_t>(2 * n, 16));
  if (slots_.size() < capacity) {
    slots_.assign(capacity, Slot{0, 0, 0});
    stamp_ = 0;
  }
  if (++stamp_ == 0) {  // 2^32 calls: the stamps wrap, so every slot is emptied once
    for (Slot& s : slots_) s.stamp = 0;
    stamp_ = 1;
  }
  const std::uint32_t stamp = stamp_;
  // The top bits of the mixed key pick the slot: mix64 is a bijection with full avalanche, so
  // strided keys (k % ranks == r, unified slot offsets) spread over the table.
  const int shift = 64 - std::countr_zero(capacity);
  const std::size_t mask = capacity - 1;
  Slot* const slots = slots_.data();

  distinct_.resize(n);
  Key* const distinct = distinct_.data();
  std::uint32_t* const inverse = out.inverse.data();
  std::uint32_t count = 0;
  Key any_negative = 0;
  const auto home = [&](Key k) { return static_cast<std::size_t>(mix64(static_cast<std::uint64_t>(k)) >> shift); };
  // The home slots of the next kAhead keys are computed and prefetched ahead (a ring of them): a
  // table of 2n slots outgrows L2 at about 2^14 keys, and after each mispredicted "new key?"
  // branch the next probe then starts from a ready address and a cached line.
  std::size_t ring[kRing];
  for (std::size_t j = 0; j < std::min(kAhead, n); ++j) {
    ring[j] = home(keys[j]);
    __builtin_prefetch(slots + ring[j]);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) {
      const std::size_t h = home(keys[i + kAhead]);
      ring[(i + kAhead) % kRing] = h;
      __builtin_prefetch(slots + h);
    }
    const Key k = keys[i];
    any_negative |= k;
    for (std::size_t s = ring[i % kRing];; s = (s + 1) & mask) {
      Slot& slot = slots[s];
      if (slot.stamp != stamp) {  // empty: the first occurrence of k
        slot = Slot{k, count, stamp};
        distinct[count] = k;
        inverse[i] = count++;
        break;
      }
      if (slot.key == k) {
        inverse[i] = slot.id;
        break;
      }
    }
  }
  if (any_negative < 0) throw_negative_key(keys);
  return {distinct, count};
}

void KeyRouter::group_by_owner(std::span<const Key> distinct, int ranks, Deduplication dedup, RoutedKeys& out) {
  const auto R = static_cast<std::size_t>(ranks);
  const std::size_t d = distinct.size();
  out.send_counts.assign(R, 0);
  out.send_keys.resize(d);
  if (R == 1) {  // one group: the distinct keys as they are
    std::copy(distinct.begin(), distinct.end(), out.send_keys.begin());
    out.send_counts[0] = d;
    if (dedup == Deduplication::kOff)
      for (std::size_t i = 0; i < d; ++i) out.inverse[i] = static_cast<std::uint32_t>(i);
    return;
  }
  const std::uint32_t* const owners = owners_.data();
  // An owner outside [0, ranks) (a negative one wrapped to a large unsigned) is an error; checked
  // before any counter is indexed by it.
  std::uint32_t max_owner = 0;
  for (std::size_t j = 0; j < d; ++j) max_owner = std::max(max_owner, owners[j]);
  EMBSCALE_EXPECTS(max_owner < R, "route: the owner function returned a rank outside [0, ranks)");

  // The counting sort runs on kLanes contiguous chunks of the ids at once, each with its own
  // counters: consecutive ids of the same owner would otherwise chain every increment of one
  // counter through memory (a store-to-load forward each, several cycles; with 2 ranks that is
  // every other id). Chunk c is ids [c q, (c + 1) q), the last chunk also takes the d % kLanes rest.
  const std::size_t q = d / kLanes;
  lane_counters_.assign(kLanes * R, 0);
  std::size_t* const counter = lane_counters_.data();  // [lane][rank]
  for (std::size_t t = 0; t < q; ++t)
    for (std::size_t c = 0; c < kLanes; ++c) ++counter[c * R + owners[c * q + t]];
  for (std::size_t j = kLanes * q; j < d; ++j) ++counter[(kLanes - 1) * R + owners[j]];
  // Prefix sums in (rank, lane) order: each lane's run of rank r follows the earlier lanes' runs,
  // which keeps the scatter stable. The counters become the lanes' next free index.
  std::size_t first = 0;
  for (std::size_t r = 0; r < R; ++r) {
    const std::size_t group_first = first;
    for (std::size_t c = 0; c < kLanes; ++c) {
      const std::size_t n = counter[c * R + r];
      counter[c * R + r] = first;
      first += n;
    }
    out.send_counts[r] = first - group_first;
  }

  // Without de-duplication the distinct keys are the occurrences: positions go to inverse itself.
  position_.resize(dedup == Deduplication::kOn ? d : 0);
  std::uint32_t* const position = dedup == Deduplication::kOn ? position_.data() : out.inverse.data();
  Key* const send = out.send_keys.data();
  const auto place = [&](std::size_t c, std::size_t j) {
    const std::size_t p = counter[c * R + owners[j]]++;
    send[p] = distinct[j];
    position[j] = static_cast<std::uint32_t>(p);
  };
  for (std::size_t t = 0; t < q; ++t)
    for (std::size_t c = 0; c < kLanes; ++c) place(c, c * q + t);
  for (std::size_t j = kLanes * q; j < d; ++j) place(kLanes - 1, j);
  if (dedup == Deduplication::kOn)
    for (std::uint32_t& v : out.inverse) v = position[v];
}

RoutedKeys route_keys(std::span<const Key> keys, const ModuloSharding& sharding) {
  KeyRouter router;
  RoutedKeys out;
  router.route(keys, sharding, out);
  return out;
}

}  // namespace embscale::embedding
