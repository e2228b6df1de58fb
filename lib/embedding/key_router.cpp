#include "embedding/key_router.hpp"

#include <algorithm>
#include <limits>

#include "core/error.hpp"

namespace embscale::embedding {

RoutedKeys route_keys(std::span<const Key> keys, const ModuloSharding& sharding) {
  EMBSCALE_EXPECTS(keys.size() < std::numeric_limits<std::uint32_t>::max(), "too many keys in one batch for 32-bit indices");
  // Order by (owner, key): one sort both de-duplicates and groups by destination.
  const auto by_owner_then_key = [&](Key a, Key b) {
    const int oa = sharding.owner(a), ob = sharding.owner(b);
    return oa != ob ? oa < ob : a < b;
  };
  RoutedKeys out;
  out.send_keys.assign(keys.begin(), keys.end());
  std::sort(out.send_keys.begin(), out.send_keys.end(), by_owner_then_key);
  out.send_keys.erase(std::unique(out.send_keys.begin(), out.send_keys.end()), out.send_keys.end());

  out.send_counts.assign(static_cast<std::size_t>(sharding.ranks), 0);
  for (const Key k : out.send_keys) {
    EMBSCALE_EXPECTS(k >= 0, "keys must be non-negative");
    ++out.send_counts[static_cast<std::size_t>(sharding.owner(k))];
  }
  out.inverse.resize(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto it = std::lower_bound(out.send_keys.begin(), out.send_keys.end(), keys[i], by_owner_then_key);
    out.inverse[i] = static_cast<std::uint32_t>(it - out.send_keys.begin());
  }
  return out;
}

}  // namespace embscale::embedding
