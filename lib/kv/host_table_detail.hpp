// HostTable's internals shared by its source files (host_table.cpp: layout, growth, rows;
// host_table_pipeline.cpp: the prefetching loops; host_table_calls.cpp: the batched calls;
// host_table_export.cpp: the reads of every entry). Not part of the interface.
#pragma once

#include <cstddef>
#include <cstdint>

namespace embscale::kv::host_table_detail {

// A key's one-byte digest: the hash's top byte (the bucket comes from its low bits).
inline std::uint8_t digest_of(std::uint64_t hash) noexcept { return static_cast<std::uint8_t>(hash >> 56); }

// Prefetches the cache lines of [p, p + bytes), to read or to write.
inline void prefetch_lines(const void* p, std::size_t bytes) noexcept {
  for (std::size_t line = 0; line < bytes; line += 64) __builtin_prefetch(static_cast<const std::byte*>(p) + line);
}
inline void prefetch_lines_to_write(const void* p, std::size_t bytes) noexcept {
  for (std::size_t line = 0; line < bytes; line += 64) __builtin_prefetch(static_cast<const std::byte*>(p) + line, 1);
}

}  // namespace embscale::kv::host_table_detail
