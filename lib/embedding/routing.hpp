// Routing of keys to their owners for the schemes: de-duplicate (switchable), group by owner,
// and the inverse index from every occurrence to its routed position. The owner is any callable
// Key -> int in [0, ranks), inlined.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "core/batch.hpp"
#include "core/error.hpp"

namespace embscale::embedding {

struct Routed {
  std::vector<Key> send_keys;             // grouped by owner in rank order; first-occurrence order within
  std::vector<std::size_t> send_counts;   // per owner
  std::vector<std::uint32_t> inverse;     // send_keys[inverse[i]] == keys[i]
};

template <class Owner>
void route_to_owners(std::span<const Key> keys, int ranks, const Owner& owner, bool deduplicate, Routed& out) {
  std::vector<Key> distinct;
  std::vector<std::uint32_t> id(keys.size());
  if (deduplicate) {
    std::unordered_map<Key, std::uint32_t> ids;
    ids.reserve(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const auto [it, fresh] = ids.try_emplace(keys[i], static_cast<std::uint32_t>(distinct.size()));
      if (fresh) distinct.push_back(keys[i]);
      id[i] = it->second;
    }
  } else {
    distinct.assign(keys.begin(), keys.end());
    for (std::size_t i = 0; i < keys.size(); ++i) id[i] = static_cast<std::uint32_t>(i);
  }
  out.send_counts.assign(static_cast<std::size_t>(ranks), 0);
  std::vector<int> owner_of(distinct.size());
  for (std::size_t d = 0; d < distinct.size(); ++d) {
    EMBSCALE_EXPECTS(distinct[d] >= 0, "keys must be non-negative");
    owner_of[d] = owner(distinct[d]);
    ++out.send_counts[static_cast<std::size_t>(owner_of[d])];
  }
  std::vector<std::size_t> next(static_cast<std::size_t>(ranks), 0);
  for (std::size_t r = 1; r < next.size(); ++r) next[r] = next[r - 1] + out.send_counts[r - 1];
  out.send_keys.resize(distinct.size());
  std::vector<std::uint32_t> position(distinct.size());
  for (std::size_t d = 0; d < distinct.size(); ++d) {
    const auto p = next[static_cast<std::size_t>(owner_of[d])]++;
    out.send_keys[p] = distinct[d];
    position[d] = static_cast<std::uint32_t>(p);
  }
  out.inverse.resize(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) out.inverse[i] = position[id[i]];
}

}  // namespace embscale::embedding
