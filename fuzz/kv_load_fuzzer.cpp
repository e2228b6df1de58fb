// libFuzzer target for the KV table's load() (kv/table_file.hpp): any bytes, loaded into a small
// table, must either load or fail with InputError, leaving the table as it was; never crash,
// leak, read out of bounds, allocate without bound or hang.
//
// Random mutations would almost never get past the checksums, so a custom mutator reseals half
// of its outputs (recomputes the header, chunk and file checksums where the header's layout
// puts them): then the fields behind the checksums are fuzzed too.
//
// Seeds: with EMBSCALE_FUZZ_WRITE_SEEDS=<dir> the binary writes valid small dumps (both key
// types, every value type, training and evaluation, full and incremental, 0 to 40 entries in
// chunks of 1 to 16) to <dir> and exits (scripts/fuzz-check does this before each run).
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "core/checksum.hpp"
#include "core/error.hpp"
#include "kv/host_kv_table.hpp"
#include "kv/table_file.hpp"
#include "kv/table_file_format.hpp"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

using namespace embscale::kv;
using embscale::checksum64;

// The fuzzed table: dim 3, optimizer width 2 in training (0 in evaluation), small buckets so
// eviction and refusal happen. The input's first byte picks key type, value type and mode; the
// rest is the file (so that every seed's table matches its file).
TableOptions fuzz_options(std::uint8_t selector) {
  TableOptions o;
  o.dim = 3;
  o.optimizer_state_width = 2;
  o.training = (selector & 4) != 0;
  o.value_type = static_cast<ValueType>((selector >> 3) % 3);
  o.bucket_capacity = 16;
  o.init_capacity = 16;
  o.max_capacity = 64;
  o.score_strategy = ScoreStrategy::kCustomized;
  return o;
}
KeyType fuzz_key_type(std::uint8_t selector) { return (selector & 1) ? KeyType::kUint64 : KeyType::kInt64; }

template <typename Key> void fill(KvTable<Key>& table, int n, std::uint64_t seed) {
  std::vector<Key> keys;
  std::vector<std::uint64_t> scores;
  for (int i = 0; i < n; ++i) {
    keys.push_back(static_cast<Key>(seed * 1000003 + static_cast<std::uint64_t>(i) * 7919));
    scores.push_back(seed + static_cast<std::uint64_t>(i % 5));
  }
  std::vector<float> rows(keys.size() * static_cast<std::size_t>(table.row_width()));
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<float>(i) * 0.25f - 3.0f;
  table.insert_or_assign(keys, rows, scores);
}

// Every entry: keys, scores and rows (bit patterns, so that NaN rows compare equal).
template <typename Key> std::vector<std::uint64_t> contents(const KvTable<Key>& table) {
  Entries<Key> all;
  table.export_batch_if(0, all);
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < all.size(); ++i) {
    out.push_back(static_cast<std::uint64_t>(all.keys[i]));
    out.push_back(all.scores[i]);
  }
  for (const float v : all.values) {
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    out.push_back(bits);
  }
  return out;
}

template <typename Key> void load_one(std::uint8_t selector, const std::byte* file, std::size_t size) {
  HostKvTable<Key> table(fuzz_options(selector));
  fill(table, 5, 1);
  const auto before = contents(table);
  const std::int64_t size_before = table.size();
  try {
    const LoadStats stats = load_bytes(table.table(), key_type_of<Key>, {file, size}, "fuzz-input");
    if (stats.inserted + stats.refused + stats.replaced != stats.entries) std::abort();
    if (table.size() != size_before + stats.inserted - stats.evicted) std::abort();
    if (table.size() > table.capacity()) std::abort();
  } catch (const embscale::InputError&) {
    if (contents(table) != before) std::abort();  // a refused file must leave the table as it was
  }
}

void write_seeds(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  int written = 0;
  for (std::uint8_t selector = 0; selector < 24; ++selector) {
    if (selector & 2) continue;  // bit 1 unused
    for (const int entries : {0, 1, 9, 40}) {
      const auto write_one = [&]<typename Key>(HostKvTable<Key>& table) {
        fill(table, entries, selector + 1u);
        const auto file = dir / ("dump_" + std::to_string(written));
        const DumpOptions options{1 + (written % 16), {}};
        if (written % 3 == 0) dump_incremental(table.table(), fuzz_key_type(selector), file, 2, options);
        else dump(table.table(), fuzz_key_type(selector), file, options);
        // Prefix the selector byte.
        std::FILE* in = std::fopen(file.c_str(), "rb");
        std::vector<char> bytes(1, static_cast<char>(selector));
        for (int c; (c = std::fgetc(in)) != EOF;) bytes.push_back(static_cast<char>(c));
        std::fclose(in);
        std::FILE* out = std::fopen(file.c_str(), "wb");
        std::fwrite(bytes.data(), 1, bytes.size(), out);
        std::fclose(out);
        // A seed must load, or the corpus teaches the fuzzer nothing beyond the first error.
        HostKvTable<Key> check(fuzz_options(selector));
        const LoadStats stats =
            load_bytes(check.table(), fuzz_key_type(selector),
                       {reinterpret_cast<const std::byte*>(bytes.data()) + 1, bytes.size() - 1}, file.string());
        if (written % 3 != 0 && stats.entries != table.size()) std::abort();  // a full dump: every entry
        ++written;
      };
      if (fuzz_key_type(selector) == KeyType::kInt64) {
        HostKvTable<std::int64_t> table(fuzz_options(selector));
        write_one(table);
      } else {
        HostKvTable<std::uint64_t> table(fuzz_options(selector));
        write_one(table);
      }
    }
  }
  std::fprintf(stderr, "kv_load_fuzzer: wrote %d seeds to %s\n", written, dir.c_str());
}

std::uint64_t get_u64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
void put_u64(std::uint8_t* p, std::uint64_t v) { std::memcpy(p, &v, 8); }

// Recomputes the checksums where a file with this header would have them (file = data + 1).
void reseal(std::uint8_t* data, std::size_t size) {
  if (size < 1 + kTableFileHeaderBytes) return;
  std::uint8_t* f = data + 1;
  const std::size_t n = size - 1;
  put_u64(f + 88, checksum64(f, 88));
  std::uint32_t chunk_entries;
  std::memcpy(&chunk_entries, f + 20, 4);
  const std::uint8_t value_code = f[17];
  const std::uint64_t width = get_u64(f + 24) + get_u64(f + 32);
  const std::uint64_t entry_count = get_u64(f + 40);
  if (chunk_entries == 0 || value_code < 1 || value_code > 3 || width > (1u << 21)) return;
  const std::uint64_t row_bytes = width * (value_code == 1 ? 4 : 2);
  std::size_t at = kTableFileHeaderBytes;
  for (std::uint64_t done = 0; done < entry_count;) {
    const std::uint64_t k = std::min<std::uint64_t>(chunk_entries, entry_count - done);
    const std::uint64_t bytes = 16 + 16 * k + ((k * row_bytes + 7) & ~std::uint64_t{7}) + 8;
    if (bytes > n - at) return;
    put_u64(f + at + bytes - 8, checksum64(f + at, bytes - 8));
    at += bytes;
    done += k;
  }
  if (n >= 8) put_u64(f + n - 8, checksum64(f, n - 8));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("EMBSCALE_FUZZ_WRITE_SEEDS")) {
    write_seeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  size = LLVMFuzzerMutate(data, size, max_size);
  if (seed % 2 == 0) reseal(data, size);
  return size;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t selector = data[0];
  const auto* file = reinterpret_cast<const std::byte*>(data + 1);
  if (fuzz_key_type(selector) == KeyType::kInt64) load_one<std::int64_t>(selector, file, size - 1);
  else load_one<std::uint64_t>(selector, file, size - 1);
  return 0;
}
