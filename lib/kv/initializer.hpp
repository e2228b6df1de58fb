// Initial rows of a dynamic table: a pure function of (seed, key), so a key's first row is the
// same on any rank, with any number of threads, in any table that shares the seed, on the host
// or a GPU (the arithmetic is kv/portable/initializer_ref.hpp's, which both run).
#pragma once

#include <cstdint>
#include <span>

#include "kv/portable/initializer_ref.hpp"
#include "kv/table_options.hpp"

namespace embscale::kv {

// The portable initializer of `args` for rows of `dim` values then the optimizer state, the
// default bounds resolved. Its initial_state points into args (which must outlive it); the GPU
// table copies the state to device memory and points there.
portable::InitializerRef initializer_ref(const InitializerArgs& args, std::uint64_t seed, std::int64_t num_embeddings,
                                         std::int64_t dim) noexcept;

// Fills `row`: its first `dim` values from `args`, the rest (the optimizer state) from
// args.initial_state. The one initializer of every storage: the embedding engine's static rows use it
// too, so a static and a dynamic table of one seed start from the same rows.
// Default UNIFORM / TRUNCATED_NORMAL bounds (lower = upper = 0): -+1/sqrt(num_embeddings).
void initial_row(const InitializerArgs& args, std::uint64_t seed, std::int64_t num_embeddings, std::uint64_t key,
                 std::int64_t dim, std::span<float> row) noexcept;

}  // namespace embscale::kv
