// Initial embedding rows. A key's initial row is a pure function of (table seed, key), so it is
// the same whichever rank owns the key and however many ranks share the table: the basis of
// comparing a distributed run with a single-process reference.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>

#include "core/batch.hpp"
#include "core/hash.hpp"
#include "core/rng.hpp"

namespace embscale::embedding {

// UNIFORM in [-bound, bound); dynamicemb's default bound is 1 / sqrt(num_embeddings).
struct UniformInitializer {
  std::uint64_t seed = 0;
  float bound = 0.0f;

  static UniformInitializer for_vocabulary(std::uint64_t seed, std::int64_t num_embeddings) {
    return {seed, static_cast<float>(1.0 / std::sqrt(static_cast<double>(num_embeddings)))};
  }

  // Fills `row` (dim values): value d comes from lane d % 4 of Philox block d / 4 of stream `key`.
  void operator()(Key key, std::span<float> row) const noexcept {
    const CounterRng rng(seed, static_cast<std::uint64_t>(key));
    for (std::size_t d = 0; d < row.size(); d += 4) {
      const PhiloxBlock block = rng.block(d / 4);
      for (std::size_t lane = 0; lane < 4 && d + lane < row.size(); ++lane)
        row[d + lane] = (2.0f * CounterRng::uniform_float(block, static_cast<int>(lane)) - 1.0f) * bound;
    }
  }
};

}  // namespace embscale::embedding

namespace embscale::embedding {

// Seed of the table of the `layer_index`-th embedding layer, derived from the solver's seed
// (a domain apart from the workload's seeds).
inline std::uint64_t table_seed(std::uint64_t solver_seed, std::size_t layer_index) {
  return hash_combine(hash_combine(solver_seed, 0x7ab1e5eedULL), layer_index);
}

}  // namespace embscale::embedding
