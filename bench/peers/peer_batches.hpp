// The batches embscale generates, written in the layout FBGEMM's table-batched embedding takes, so
// that FBGEMM and torch (peers.py) are fed exactly the indices embscale's engine is.
//
// File layout (little-endian, every field int64 after the magic):
//   "EMBPEER1"                         8 bytes
//   batches, B, T, E, D                the batch count, samples per batch, tables, rows per table, dim
//   per batch: n, offsets[T*B + 1], indices[n]
// Offsets are table-major (bag t*B + b: table t of sample b, FBGEMM's order) and indices are rows of
// their own table, in [0, E). torch's single concatenated table takes t*E + index, which is
// embscale's unified key (every table has E rows).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

#include "core/batch.hpp"

namespace embscale::bench {

inline constexpr char kPeerBatchesMagic[8] = {'E', 'M', 'B', 'P', 'E', 'E', 'R', '1'};

// Writes `batches` (embscale's sample-major batches of one rank holding the whole global batch,
// every slot of `rows_per_table` keys) to `path`. Throws embscale::Error naming the file when it
// cannot be written, InputError when a batch does not have the shape of the first.
void write_peer_batches(const std::filesystem::path& path, std::span<const Batch> batches, std::int64_t rows_per_table,
                        std::int64_t dim);

}  // namespace embscale::bench
