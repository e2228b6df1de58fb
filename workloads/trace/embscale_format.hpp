// embscale's trace format: chunked, checksummed, versioned and seekable by sample.
//
// Every integer is little-endian; every section starts at a multiple of 8 bytes. Checksums are
// Checksum64 (core/checksum.hpp, XXH64, as the KV table's dump files).
//
//   header (48 + 8 * slot_size_count + 8 bytes)
//     0  magic            8 bytes "EMBSTRCE"
//     8  format_version   u32, kEmbscaleTraceVersion
//    12  header_bytes     u32, 56 + 8 * slot_size_count
//    16  key_bytes        u8: 4 (keys stored as uint32) or 8 (int64)
//    17  flags            u8, 0
//    18  reserved         u16, 0
//    20  label_dim        u32, in [0, 2^20]
//    24  dense_dim        u32, in [0, 2^20]
//    28  num_slots        u32, in [1, 2^20]
//    32  chunk_samples    u32, in [1, 2^24]: samples per chunk (the last chunk may hold fewer)
//    36  slot_size_count  u32: 0 (key spaces not recorded) or num_slots
//    40  reserved         u64, 0
//    48  slot_sizes       slot_size_count x i64, each >= 1, summing below 2^63
//        header_checksum  u64: of the header's bytes before it
//   chunks, chunk i holding samples [first_sample, first_sample + sample_count):
//     0  magic            4 bytes "TCHK"
//     4  sample_count     u32, in [1, chunk_samples]
//     8  chunk_index      u64, i
//    16  first_sample     u64
//    24  key_count        u64: keys in the chunk
//    32  nnz              sample_count * num_slots x u32, sample-major (bag b = sample * num_slots + slot)
//        labels           sample_count * label_dim x f32
//        dense            sample_count * dense_dim x f32
//        keys             key_count x key_bytes (unified keys; uint32 zero-extends)
//        zero bytes up to a multiple of 8
//        chunk_checksum   u64: of the chunk's bytes before it
//   index
//     0  magic            4 bytes "TIDX"
//     4  reserved         u32, 0
//     8  chunk_count      u64
//    16  entries          chunk_count x { first_sample u64, byte offset of the chunk u64 }
//        index_checksum   u64: of the index's bytes before it
//   trailer (32 bytes, the file's last)
//     0  magic            4 bytes "TEND"
//     4  reserved         u32, 0
//     8  index_offset     u64
//    16  total_samples    u64
//    24  file_checksum    u64: of every byte of the file before it
//
// The writer streams: header, then a chunk whenever chunk_samples samples are buffered, then the
// rest, the index and the trailer; it writes under a temporary name and renames when complete
// (core/atomic_file.hpp), so a file with a trailer is whole. The counts sit at the end for that
// reason: nothing is rewritten.
//
// The reader checks at open the header (magic and version first, then its checksum, then every
// field), the trailer and the index (its checksum; chunk 0 right after the header; first samples
// rising by 1..chunk_samples; offsets rising; the last chunk ending before the index), so a seek
// lands on a checked chunk offset. Each chunk is checked when read (magic, counts against the index,
// its checksum before its contents, nnz against max_nnz, keys against the slot key spaces). The
// file checksum needs every byte: a reader that reads the whole trace in order from sample 0
// checks it after the last chunk; one that seeks relies on the header, chunk and index checksums.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>

#include "workloads/trace/trace.hpp"

namespace embscale::trace {

inline constexpr char kEmbscaleTraceMagic[8] = {'E', 'M', 'B', 'S', 'T', 'R', 'C', 'E'};
inline constexpr std::uint32_t kEmbscaleTraceVersion = 1;
inline constexpr std::size_t kEmbscaleTraceFixedHeaderBytes = 48;
inline constexpr std::size_t kEmbscaleTraceChunkHeaderBytes = 32;
inline constexpr std::size_t kEmbscaleTraceTrailerBytes = 32;
inline constexpr std::int64_t kEmbscaleTraceMaxChunkSamples = std::int64_t{1} << 24;

std::unique_ptr<TraceReader> open_embscale_reader(const std::filesystem::path& path, const TraceReadOptions& options);
std::unique_ptr<TraceWriter> open_embscale_writer(const std::filesystem::path& path, const TraceShape& shape,
                                                  const TraceWriteOptions& options);

}  // namespace embscale::trace
