// Routing of a rank's batch keys to their owners: de-duplicate, then group by owner rank.
// Sending each distinct key once is what makes the exchange volume depend on the skew of the
// workload (a Zipf batch repeats its hot keys) rather than on the raw batch size.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/batch.hpp"
#include "embedding/static_table.hpp"

namespace embscale::embedding {

struct RoutedKeys {
  // Distinct keys grouped by owner in rank order, ascending within a group.
  std::vector<Key> send_keys;
  // Number of send_keys for each owner rank.
  std::vector<std::size_t> send_counts;
  // For every input key occurrence i: send_keys[inverse[i]] == keys[i].
  std::vector<std::uint32_t> inverse;
};

RoutedKeys route_keys(std::span<const Key> keys, const ModuloSharding& sharding);

}  // namespace embscale::embedding
