#include "kv/table_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/temp_files.hpp"
#include "kv/score_rules.hpp"

namespace embscale::kv {
namespace {

constexpr std::int64_t kChunkTargetBytes = std::int64_t{4} << 20;

std::string errno_text() { return std::strerror(errno); }

// Where a dump's bytes go: the file itself (AtomicFile), or memory (a DumpImage's bytes).
struct MemorySink {
  std::vector<std::byte>& bytes;
  void write(std::span<const std::byte> b) { bytes.insert(bytes.end(), b.begin(), b.end()); }
};

// Table: HostTable or PortableTable (their export_stored streams the entries under one read).
// Sink: AtomicFile or MemorySink. Returns the next threshold; `entries` receives the count.
template <class Table, class Sink>
std::uint64_t encode_dump(const Table& table, KeyType key_type, Sink& out, bool incremental, std::uint64_t threshold,
                          const DumpOptions& options, std::int64_t& entries) {
  const TableOptions& o = table.options();
  TableFileHeader header = dump_header(o, table.row_width(), key_type, options.chunk_entries);
  header.incremental = incremental;
  header.threshold = incremental ? threshold : 0;
  std::optional<TableFileEncoder> encoder;
  std::int64_t chunks = 0;
  table.export_stored(
      incremental ? threshold : 0, header.chunk_entries,
      [&](const HostTable::ExportSummary& summary) {
        header.entry_count = summary.count;
        header.next_threshold = next_dump_threshold(score_rules(o.score_strategy), header.threshold, summary.score_now,
                                                    summary.count, summary.max_score);
        encoder.emplace(header);
        out.write(encoder->header());
      },
      [&](const HostTable::StoredEntries& stored) {
        out.write(encoder->chunk(stored.keys, stored.scores, stored.rows));
        ++chunks;
        if (options.after_chunk) options.after_chunk(chunks);
      });
  out.write(encoder->trailer());
  entries = header.entry_count;
  return header.next_threshold;
}

template <class Table>
std::uint64_t write_dump(const Table& table, KeyType key_type, const std::filesystem::path& path, bool incremental,
                         std::uint64_t threshold, const DumpOptions& options) {
  check_file_can_be_created(path, "the table dump");
  // Written under a temporary name, renamed when complete (core/atomic_file.hpp); an exception
  // leaves the previous dump at `path` untouched and removes the temporary file.
  AtomicFile out(path);
  std::int64_t entries = 0;
  const std::uint64_t next = encode_dump(table, key_type, out, incremental, threshold, options, entries);
  out.commit();
  return next;
}

template <class Table>
DumpImage dump_image(const Table& table, KeyType key_type, std::uint64_t threshold, const DumpOptions& options) {
  DumpImage image;
  MemorySink sink{image.bytes};
  image.next_threshold = encode_dump(table, key_type, sink, true, threshold, options, image.entries);
  return image;
}

// A validated file's entries restored into `table` (HostTable or PortableTable).
template <class Table>
LoadStats restore_file(Table& table, KeyType key_type, std::span<const std::byte> bytes, const std::string& name) {
  TableFileContents contents = parse_table_file(bytes, name);
  check_compatible(contents.header, table.options(), table.row_width(), key_type, name);
  // Nothing above changed the table; restore is the only call that does, and it checks its keys
  // (the parser refused reserved ones) before changing anything.
  return load_stats(contents, table.restore(contents.keys, contents.values, contents.scores));
}

std::vector<std::byte> read_whole_file(const std::filesystem::path& path) {
  const std::string what = "cannot load a table dump from " + path.string() + ": ";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) throw InputError(what + "no such file");
    throw InputError(what + errno_text());
  }
  struct stat st {};
  std::vector<std::byte> bytes;
  try {
    if (::fstat(fd, &st) != 0) throw InputError(what + errno_text());
    if (S_ISDIR(st.st_mode)) throw InputError(what + "it is a directory (expected a file written by dump)");
    if (!S_ISREG(st.st_mode)) throw InputError(what + "not a regular file");
    bytes.resize(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw InputError(what + errno_text());
      if (n == 0) break;  // shrank while being read: the parser reports the truncation
      done += static_cast<std::size_t>(n);
    }
    bytes.resize(done);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return bytes;
}

}  // namespace

TableFileHeader dump_header(const TableOptions& o, std::int64_t row_width, KeyType key_type,
                            std::int64_t chunk_entries) {
  TableFileHeader header;
  header.key_type = key_type;
  header.value_type = o.value_type;
  header.score_strategy = o.score_strategy;
  header.dim = o.dim;
  header.optimizer_width = row_width - o.dim;
  const std::int64_t entry_bytes = 16 + row_width * static_cast<std::int64_t>(value_bytes(o.value_type));
  header.chunk_entries = chunk_entries > 0
                             ? std::min(chunk_entries, kTableFileMaxChunkEntries)
                             : std::clamp<std::int64_t>(kChunkTargetBytes / entry_bytes, 1, std::int64_t{1} << 20);
  return header;
}

void dump(const HostTable& table, KeyType key_type, const std::filesystem::path& path, const DumpOptions& options) {
  write_dump(table, key_type, path, false, 0, options);
}

std::uint64_t dump_incremental(const HostTable& table, KeyType key_type, const std::filesystem::path& path,
                               std::uint64_t threshold, const DumpOptions& options) {
  return write_dump(table, key_type, path, true, threshold, options);
}

void check_compatible(const TableFileHeader& h, const HostTable& table, KeyType key_type, const std::string& name) {
  check_compatible(h, table.options(), table.row_width(), key_type, name);
}

void check_compatible(const TableFileHeader& h, const TableOptions& o, std::int64_t row_width, KeyType key_type,
                      const std::string& name) {
  const auto refuse = [&](const std::string& field, const std::string& file, const std::string& mine) {
    throw InputError(name + ": cannot load into this table: " + field + ": the file has " + file + ", the table " +
                     mine);
  };
  if (h.key_type != key_type) refuse("key type (header byte 16)", to_string(h.key_type), to_string(key_type));
  if (h.dim != o.dim) refuse("dim (header byte 24)", std::to_string(h.dim), std::to_string(o.dim));
  const std::int64_t width = row_width - o.dim;
  if (h.optimizer_width != width)
    refuse("optimizer state width (header byte 32)", std::to_string(h.optimizer_width),
           std::to_string(width) + (o.training ? " (training)" : " (evaluation: no optimizer state)"));
  if (h.score_strategy != o.score_strategy)
    refuse("score strategy (header byte 18)", to_string(h.score_strategy), to_string(o.score_strategy));
}

LoadStats load_bytes(HostTable& table, KeyType key_type, std::span<const std::byte> bytes, const std::string& name) {
  return restore_file(table, key_type, bytes, name);
}

LoadStats load_stats(const TableFileContents& contents, const CallStats& restored) {
  LoadStats out;
  out.entries = static_cast<std::int64_t>(contents.keys.size());
  out.inserted = restored.inserted;
  out.replaced = restored.found;
  out.evicted = restored.evicted;
  out.refused = restored.refused;
  out.incremental = contents.header.incremental;
  out.threshold = contents.header.threshold;
  out.next_threshold = contents.header.next_threshold;
  return out;
}

TableFileContents read_dump(const std::filesystem::path& path, const TableOptions& options, std::int64_t row_width,
                            KeyType key_type) {
  const std::vector<std::byte> bytes = read_whole_file(path);
  TableFileContents contents = parse_table_file(bytes, path.string());
  check_compatible(contents.header, options, row_width, key_type, path.string());
  return contents;
}

DumpImage dump_incremental_image(const HostTable& table, KeyType key_type, std::uint64_t threshold,
                                 const DumpOptions& options) {
  return dump_image(table, key_type, threshold, options);
}

DumpImage dump_incremental_image(const PortableTable& table, KeyType key_type, std::uint64_t threshold,
                                 const DumpOptions& options) {
  return dump_image(table, key_type, threshold, options);
}

void write_dump_image(const DumpImage& image, const std::filesystem::path& path) {
  check_file_can_be_created(path, "the table dump");
  AtomicFile out(path);
  out.write(image.bytes);
  out.commit();
}

LoadStats load(HostTable& table, KeyType key_type, const std::filesystem::path& path) {
  const std::vector<std::byte> bytes = read_whole_file(path);
  return load_bytes(table, key_type, bytes, path.string());
}

void dump(const PortableTable& table, KeyType key_type, const std::filesystem::path& path, const DumpOptions& options) {
  write_dump(table, key_type, path, false, 0, options);
}

std::uint64_t dump_incremental(const PortableTable& table, KeyType key_type, const std::filesystem::path& path,
                               std::uint64_t threshold, const DumpOptions& options) {
  return write_dump(table, key_type, path, true, threshold, options);
}

LoadStats load(PortableTable& table, KeyType key_type, const std::filesystem::path& path) {
  const std::vector<std::byte> bytes = read_whole_file(path);
  return restore_file(table, key_type, bytes, path.string());
}

}  // namespace embscale::kv
