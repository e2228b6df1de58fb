#include "kv/initializer.hpp"

#include <cmath>

namespace embscale::kv {

portable::InitializerRef initializer_ref(const InitializerArgs& args, std::uint64_t seed, std::int64_t num_embeddings,
                                         std::int64_t dim) noexcept {
  portable::InitializerRef r;
  r.mode = args.mode;
  r.mean = args.mean;
  r.std_dev = args.std_dev;
  r.lower = args.lower;
  r.upper = args.upper;
  r.value = args.value;
  if (r.lower == 0.0 && r.upper == 0.0) {
    r.upper = 1.0 / std::sqrt(static_cast<double>(num_embeddings));
    r.lower = -r.upper;
  }
  r.initial_state = args.initial_state.data();
  r.state_size = static_cast<std::uint32_t>(args.initial_state.size());
  r.dim = static_cast<std::uint32_t>(dim);
  r.seed = seed;
  return r;
}

void initial_row(const InitializerArgs& args, std::uint64_t seed, std::int64_t num_embeddings, std::uint64_t key,
                 std::int64_t dim, std::span<float> out) noexcept {
  const portable::InitializerRef r = initializer_ref(args, seed, num_embeddings, dim);
  const auto values = static_cast<std::uint32_t>(dim);
  std::uint32_t d = 0;
  if (r.mode == InitializerMode::kUniform) {
    // The common case, at every table creation and first insert: one Philox block gives values
    // d .. d + 3 (initial_value would draw the block once per value).
    const CounterRng rng(seed, key);
    for (; d < values; d += 4) {
      const PhiloxBlock block = rng.block(d / 4);
      for (std::uint32_t lane = 0; lane < 4 && d + lane < values; ++lane)
        out[d + lane] = portable::uniform_initial_value(r, block, static_cast<int>(lane));
    }
    d = values;
  }
  for (; d < out.size(); ++d) out[d] = portable::initial_value(r, key, d);
}

}  // namespace embscale::kv
