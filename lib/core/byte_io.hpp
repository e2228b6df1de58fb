// Little-endian bytes in and out of memory, for the versioned file formats (kv/table_file_format,
// workloads/trace): appending fields to a buffer, reading them back with a cursor whose every
// failure is an InputError naming the file, the byte offset, the field, what was expected and
// what came.
//
// Every reader of a file built on these says where it failed in one shape:
//   "<file>: byte <offset>, <field>: expected <expected>, got <got>"
//   "<file>: truncated: <field> needs bytes [a, b) but the file ends at byte <n>"
//   (or "... but <the region> ends at byte <n>" inside a region with its own length)
// where <field> carries the record it belongs to ("sample 12 slot 3 nnz"), so a message always
// names the file, the place in it and the sample.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace embscale {

static_assert(std::endian::native == std::endian::little,
              "the file formats are little-endian and written in native order");

template <typename T> void put(std::vector<std::byte>& out, T v) {
  const auto at = out.size();
  out.resize(at + sizeof v);
  std::memcpy(out.data() + at, &v, sizeof v);
}

inline void put_bytes(std::vector<std::byte>& out, const void* p, std::size_t n) {
  const auto at = out.size();
  out.resize(at + n);
  if (n) std::memcpy(out.data() + at, p, n);
}

inline std::size_t padded8(std::size_t n) noexcept { return (n + 7) & ~std::size_t{7}; }

std::string hex(std::uint64_t v);
// Printable ASCII as is, anything else as \xNN, in double quotes (a magic that came wrong).
std::string quoted_bytes(const std::byte* p, std::size_t n);

// The two messages above.
[[noreturn]] void throw_field_error(const std::string& file, std::uint64_t offset, const std::string& field,
                                    const std::string& expected, const std::string& got);
[[noreturn]] void throw_truncated(const std::string& file, const std::string& field, std::uint64_t begin,
                                  std::uint64_t end, std::uint64_t limit, const std::string& what_ends = "the file");

// Sequential reads from bytes held in memory. `base` is the file offset of bytes[0] (a chunk read
// from the middle of a file reports file offsets); `what_ends` names what ends where the bytes
// end, for truncation messages ("the file", "chunk 3", "sample 7's length").
class ByteReader {
 public:
  ByteReader(std::span<const std::byte> bytes, const std::string& name, std::uint64_t base = 0,
             std::string what_ends = "the file")
      : bytes_(bytes), name_(name), base_(base), what_ends_(std::move(what_ends)) {}

  // File offset of the next byte.
  std::uint64_t offset() const noexcept { return base_ + pos_; }
  std::size_t left() const noexcept { return bytes_.size() - pos_; }

  const std::byte* take(std::size_t n, const std::string& field) {
    if (n > left()) throw_truncated(name_, field, offset(), offset() + n, base_ + bytes_.size(), what_ends_);
    const std::byte* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  template <typename T> T read(const std::string& field) {
    T v;
    std::memcpy(&v, take(sizeof v, field), sizeof v);
    return v;
  }

  [[noreturn]] void fail(std::uint64_t offset, const std::string& field, const std::string& expected,
                         const std::string& got) const {
    throw_field_error(name_, offset, field, expected, got);
  }

 private:
  std::span<const std::byte> bytes_;
  const std::string& name_;
  std::uint64_t base_;
  std::string what_ends_;
  std::size_t pos_ = 0;
};

}  // namespace embscale
