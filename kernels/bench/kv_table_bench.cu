// The GPU table's batch calls in HierarchicalKV's benchmark shapes, beside the machine's limits
// measured in the same run.
//
//   embscale_kv_table_bench [--dims 8,64] [--load-factors 0.5,0.75,1.0] [--batch 1048576]
//                           [--capacity-dim8 134217728] [--capacity-dim64 67108864]
//                           [--memory pure,hybrid] [--hit-rate 0.6] [--reps 20] [--warmup 3]
//                           [--json FILE]
//
// Per (dim, memory, load factor): a table of `capacity` slots (buckets of 128, rows of dim floats,
// STEP scores, no filter), its rows in device memory ("pure") or half of them in pinned host
// memory that the GPU reads over the bus ("hybrid": HierarchicalKV's HBM + HMEM, with the
// budget bench/peers/hkv/run-hkv.sh gives HKV, half the rows' bytes), filled with distinct random keys by insert_or_assign
// batches until size = load factor x capacity (at 1.0 some buckets overflow and evict, as in
// HierarchicalKV's runs), and the table's arrays saved (a device copy, untimed). Then per
// operation (find, insert_or_assign, find_or_insert, insert_and_evict), `reps` timed calls after
// `warmup`, each on a fresh random batch whose hit_rate share is drawn from the inserted keys and
// the rest new (HierarchicalKV's benchmark: 60 % present); after each timed call that changes the
// table, the saved keys, scores and digests are copied back (untimed; the rows' values do not
// change what a call does), so every call sees the same table: the same load factor, no keys lost
// to evictions, no erased slots. A
// call's time is CUDA events around all its device work on one stream: the grouping by bucket
// (radix sort) and the batch kernel; keys, rows and outputs live in device memory.
//
// The limits, same run: cudaMemcpy device-to-device (bytes read plus written) and a random row
// gather of the same width (embscale_cuda_gather_rows_async, batch rows of a table of capacity
// rows). Each operation's `fraction_of_gather` is the gather's time for one batch over the
// operation's time: how near the call comes to moving its rows at the gather's speed.
//
// At the first load factor also find and find_or_insert on skewed batches full of duplicates
// (make_skewed_batch): what a hot key costs the batch rule's serial groups.
//
// Prints a table (billions of keys per second, B-KV/s, HierarchicalKV's unit) and, with --json,
// writes every figure to FILE.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_check.cuh"
#include "device/families/kv_table.h"
#include "device/families/row_gather.h"
#include "kv/portable/batch_ref.hpp"

namespace {

namespace portable = embscale::kv::portable;
using portable::BatchOp;

#define ABI_CHECK(call)                                                                      \
  do {                                                                                       \
    const int abi_code_ = (call);                                                            \
    if (abi_code_ != EMBSCALE_CUDA_OK) {                                                     \
      std::fprintf(stderr, "%s:%d: %s: code %d: %s\n", __FILE__, __LINE__, #call, abi_code_, \
                   embscale_cuda_last_error_detail());                                       \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (false)

constexpr std::uint64_t kKeyMask = 0x7FFFFFFFFFFFFFFFULL;  // never a reserved key

// Key j of the run: distinct for distinct j (mix64 is a bijection; the mask keeps them apart
// with probability 1 - 2^-63 per pair, and a rare collision only repeats a key).
__global__ void make_keys(std::uint64_t* keys, std::uint64_t n, std::uint64_t first) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    keys[i] = embscale::mix64(first + i) & kKeyMask;
}

// A batch: share hit_rate of keys j drawn uniformly from [0, present), the others new (j from
// `fresh` on).
__global__ void make_batch(std::uint64_t* keys, std::uint64_t n, std::uint64_t present, double hit_rate,
                           std::uint64_t fresh, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    const std::uint64_t r = embscale::mix64(seed * 0x9E3779B97F4A7C15ULL + i);
    const bool hit = static_cast<double>(r >> 11) * 0x1.0p-53 < hit_rate;
    const std::uint64_t j = hit ? embscale::mix64(r) % present : fresh + i;
    keys[i] = embscale::mix64(j) & kKeyMask;
  }
}

// A skewed batch with heavy duplicates: key j = floor(present x u^4), u uniform, so key 0 alone is
// about present^(-1/4) of the batch (1 % at 2^26 keys): what a Zipf workload sends a table that
// is not given de-duplicated batches.
__global__ void make_skewed_batch(std::uint64_t* keys, std::uint64_t n, std::uint64_t present, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    const double u = static_cast<double>(embscale::mix64(seed * 0x9E3779B97F4A7C15ULL + i) >> 11) * 0x1.0p-53;
    const auto j = static_cast<std::uint64_t>(static_cast<double>(present) * u * u * u * u);
    keys[i] = embscale::mix64(j) & kKeyMask;
  }
}

__global__ void fill_floats(float* data, std::uint64_t count, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < count;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    data[i] = static_cast<float>(embscale::mix64(seed ^ i) >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

__global__ void fill_rows_index(std::int64_t* rows, std::uint64_t n, std::uint64_t num_rows, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    rows[i] = static_cast<std::int64_t>(embscale::mix64(seed + i) % num_rows);
}

// The table's size: the slots that hold a key (below the reserved keys).
__global__ void count_keys(const std::uint64_t* keys, std::uint64_t slots, unsigned long long* count) {
  unsigned long long mine = 0;
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < slots;
       i += std::uint64_t{gridDim.x} * blockDim.x)
    mine += keys[i] < portable::kFirstReserved;
  atomicAdd(count, mine);
}

template <class T> T* device_alloc(std::uint64_t n) {
  T* p = nullptr;
  BENCH_CHECK(cudaMalloc(&p, std::max<std::uint64_t>(n, 1) * sizeof(T)));
  return p;
}

constexpr int kThreads = 256;
constexpr int kGrid = 1024;

struct Options {
  std::vector<std::uint32_t> dims{8, 64};
  std::vector<double> load_factors{0.5, 0.75, 1.0};
  std::uint64_t batch = 1ull << 20;
  std::uint64_t capacity_dim8 = 1ull << 27;
  std::uint64_t capacity_dim64 = 1ull << 26;
  std::vector<bool> memories{false, true};  // pure, hybrid
  double hit_rate = 0.6;
  int reps = 20, warmup = 3;
  std::string json;
};

// The device table of one shape and the buffers of its calls.
struct Bench {
  Bench(std::uint32_t dim, std::uint64_t capacity, std::uint64_t batch, bool hybrid)
      : dim(dim), batch(batch), hybrid(hybrid) {
    arrays.bucket_capacity = 128;
    arrays.buckets = capacity / 128;
    arrays.row_width = dim;
    arrays.keys = device_alloc<std::uint64_t>(capacity);
    arrays.scores = device_alloc<std::uint64_t>(capacity);
    arrays.digests = device_alloc<std::uint8_t>(capacity);
    arrays.near_slots = hybrid ? capacity / 2 : capacity;
    arrays.rows = device_alloc<float>(arrays.near_slots * dim);
    if (hybrid) {
      void* far = nullptr;
      ABI_CHECK(embscale_cuda_kv_table_host_alloc((capacity - arrays.near_slots) * dim * sizeof(float), &far));
      arrays.far_rows = static_cast<float*>(far);
    }
    BENCH_CHECK(cudaMemset(arrays.keys, 0xFF, capacity * sizeof(std::uint64_t)));  // every slot empty
    saved = arrays;
    saved.keys = device_alloc<std::uint64_t>(capacity);
    saved.scores = device_alloc<std::uint64_t>(capacity);
    saved.digests = device_alloc<std::uint8_t>(capacity);
    keys = device_alloc<std::uint64_t>(batch);
    count = device_alloc<unsigned long long>(1);
    rows_in = device_alloc<float>(batch * dim);
    rows_out = device_alloc<float>(batch * dim);
    outcomes = device_alloc<std::uint8_t>(batch);
    evicted_keys = device_alloc<std::uint64_t>(batch);
    evicted_scores = device_alloc<std::uint64_t>(batch);
    evicted_rows = device_alloc<float>(batch * dim);
    order = device_alloc<std::uint32_t>(batch);
    offsets = device_alloc<std::uint32_t>(batch + 1);
    groups = device_alloc<std::uint64_t>(1);
    ABI_CHECK(embscale_cuda_kv_table_group_scratch(batch, &scratch_bytes));
    scratch = device_alloc<unsigned char>(scratch_bytes);
    fill_floats<<<kGrid, kThreads>>>(rows_in, batch * dim, 17);
    BENCH_CHECK(cudaGetLastError());
    state.arrays = arrays;
    state.rules = embscale::kv::score_rules(embscale::kv::ScoreStrategy::kStep);
    state.initializer.mode = embscale::kv::InitializerMode::kUniform;
    state.initializer.lower = -0.01;
    state.initializer.upper = 0.01;
    state.initializer.dim = dim;
  }
  ~Bench() {
    for (void* p : {static_cast<void*>(arrays.keys), static_cast<void*>(arrays.scores),
                    static_cast<void*>(arrays.digests), static_cast<void*>(arrays.rows), static_cast<void*>(saved.keys),
                    static_cast<void*>(saved.scores), static_cast<void*>(saved.digests), static_cast<void*>(keys),
                    static_cast<void*>(count), static_cast<void*>(rows_in), static_cast<void*>(rows_out),
                    static_cast<void*>(outcomes), static_cast<void*>(evicted_keys), static_cast<void*>(evicted_scores),
                    static_cast<void*>(evicted_rows), static_cast<void*>(order), static_cast<void*>(offsets),
                    static_cast<void*>(groups), static_cast<void*>(scratch)})
      cudaFree(p);
    embscale_cuda_kv_table_host_free(arrays.far_rows);
  }

  // One call on the batch in `keys` (n keys): grouped unless a read, then run; all on stream 0.
  void call(BatchOp op, std::uint64_t n, bool keep_evicted = false) {
    portable::BatchRef b;
    b.op = op;
    b.size = n;
    b.keys = keys;
    b.rows_in = rows_in;
    b.rows_out = rows_out;
    b.outcomes = outcomes;
    if (keep_evicted) {
      b.evicted_keys = evicted_keys;
      b.evicted_scores = evicted_scores;
      b.evicted_rows = evicted_rows;
    }
    if (op != BatchOp::kFind) {
      ABI_CHECK(embscale_cuda_kv_table_group(keys, n, arrays.buckets, order, offsets, groups, scratch, scratch_bytes,
                                             nullptr));
      b.order = order;
      b.offsets = offsets;
      b.group_count = groups;
      b.groups = n;
      state.call_score = ++step;
    }
    ABI_CHECK(embscale_cuda_kv_table_run(&state, &b, nullptr));
  }

  // Copies the table's arrays from `from` to `to` (untimed: saving and restoring the table).
  void copy_table(const portable::TableArrays& from, const portable::TableArrays& to) {
    const std::uint64_t slots = arrays.buckets * arrays.bucket_capacity;
    BENCH_CHECK(cudaMemcpyAsync(to.keys, from.keys, slots * 8, cudaMemcpyDeviceToDevice));
    BENCH_CHECK(cudaMemcpyAsync(to.scores, from.scores, slots * 8, cudaMemcpyDeviceToDevice));
    BENCH_CHECK(cudaMemcpyAsync(to.digests, from.digests, slots, cudaMemcpyDeviceToDevice));
  }
  void save() { copy_table(arrays, saved); }
  void restore() { copy_table(saved, arrays); }

  // The slots that hold a key.
  std::uint64_t size() {
    BENCH_CHECK(cudaMemset(count, 0, sizeof(unsigned long long)));
    count_keys<<<kGrid, kThreads>>>(arrays.keys, arrays.buckets * arrays.bucket_capacity, count);
    BENCH_CHECK(cudaGetLastError());
    unsigned long long n = 0;
    BENCH_CHECK(cudaMemcpy(&n, count, sizeof(n), cudaMemcpyDeviceToHost));
    return n;
  }

  std::uint32_t dim;
  std::uint64_t batch;
  bool hybrid;
  portable::TableArrays arrays, saved;  // saved: keys, scores and digests only
  portable::TableState state;
  std::uint64_t step = 0;
  std::uint64_t *keys, *evicted_keys, *evicted_scores, *groups;
  std::uint8_t* outcomes;
  unsigned long long* count;
  float *rows_in, *rows_out, *evicted_rows;
  std::uint32_t *order, *offsets;
  unsigned char* scratch;
  std::uint64_t scratch_bytes = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : (v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]));
}

// Median seconds of `body` over reps timed runs after warmup; `before` runs untimed first each
// time (a fresh batch), `after` untimed after (restoring the table).
template <class Before, class Body, class After>
double time_median(int warmup, int reps, Before&& before, Body&& body, After&& after) {
  cudaEvent_t start, stop;
  BENCH_CHECK(cudaEventCreate(&start));
  BENCH_CHECK(cudaEventCreate(&stop));
  std::vector<double> seconds;
  for (int r = 0; r < warmup + reps; ++r) {
    before(r);
    BENCH_CHECK(cudaEventRecord(start));
    body();
    BENCH_CHECK(cudaEventRecord(stop));
    BENCH_CHECK(cudaEventSynchronize(stop));
    BENCH_CHECK(cudaGetLastError());
    float ms = 0;
    BENCH_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (r >= warmup) seconds.push_back(ms * 1e-3);
    after();
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(seconds);
}

struct Result {
  std::string op;
  std::uint32_t dim;
  std::uint64_t capacity;
  bool hybrid;
  double load_factor, size_per_slot, seconds, bkv_per_s, fraction_of_gather;
};

std::vector<double> parse_doubles(const char* s) {
  std::vector<double> out;
  for (const char* p = s; *p;) {
    char* end = nullptr;
    out.push_back(std::strtod(p, &end));
    p = *end == ',' ? end + 1 : end;
    if (end == p && *p) break;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--dims") {
      o.dims.clear();
      for (const double d : parse_doubles(v)) o.dims.push_back(static_cast<std::uint32_t>(d));
    } else if (a == "--load-factors") o.load_factors = parse_doubles(v);
    else if (a == "--batch") o.batch = std::strtoull(v, nullptr, 0);
    else if (a == "--capacity-dim8") o.capacity_dim8 = std::strtoull(v, nullptr, 0);
    else if (a == "--capacity-dim64") o.capacity_dim64 = std::strtoull(v, nullptr, 0);
    else if (a == "--hit-rate") o.hit_rate = std::strtod(v, nullptr);
    else if (a == "--memory") {
      const std::string m = v;
      o.memories.clear();
      if (m.find("pure") != std::string::npos) o.memories.push_back(false);
      if (m.find("hybrid") != std::string::npos) o.memories.push_back(true);
    } else if (a == "--reps") o.reps = std::atoi(v);
    else if (a == "--warmup") o.warmup = std::atoi(v);
    else if (a == "--json") o.json = v;
    else {
      std::fprintf(stderr, "embscale_kv_table_bench: unknown argument '%s' (see the file's header)\n", a.c_str());
      return 2;
    }
    ++i;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop{};
  BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));

  // The copy limit: 1 GiB device to device, bytes read plus written.
  const std::uint64_t copy_bytes = 1ull << 30;
  void* copy_a = device_alloc<unsigned char>(copy_bytes);
  void* copy_b = device_alloc<unsigned char>(copy_bytes);
  fill_floats<<<kGrid, kThreads>>>(static_cast<float*>(copy_a), copy_bytes / 4, 3);
  const double copy_s = time_median(
      o.warmup, o.reps, [](int) {},
      [&] { BENCH_CHECK(cudaMemcpyAsync(copy_b, copy_a, copy_bytes, cudaMemcpyDeviceToDevice)); }, [] {});
  cudaFree(copy_a);
  cudaFree(copy_b);
  const double copy_gbs = 2.0 * static_cast<double>(copy_bytes) / copy_s * 1e-9;
  std::printf("device %s: device-to-device copy %.0f GB/s (read + write)\n", prop.name, copy_gbs);

  std::vector<Result> results;
  std::vector<std::pair<std::uint32_t, double>> gathers;
  for (const std::uint32_t dim : o.dims) {
    const std::uint64_t capacity = dim <= 8 ? o.capacity_dim8 : o.capacity_dim64;
    // The gather limit: batch random rows of a table of `capacity` rows of this width.
    float* table = device_alloc<float>(capacity * dim);
    float* gathered = device_alloc<float>(o.batch * dim);
    std::int64_t* rows = device_alloc<std::int64_t>(o.batch);
    unsigned long long* first_bad = device_alloc<unsigned long long>(1);
    fill_floats<<<kGrid, kThreads>>>(table, capacity * dim, 5);
    const double gather_s = time_median(
        o.warmup, o.reps,
        [&](int r) {
          fill_rows_index<<<kGrid, kThreads>>>(rows, o.batch, capacity, 1000 + static_cast<std::uint64_t>(r));
          BENCH_CHECK(cudaMemset(first_bad, 0xFF, sizeof(unsigned long long)));
        },
        [&] {
          ABI_CHECK(embscale_cuda_gather_rows_async(table, static_cast<std::int64_t>(capacity), dim, rows,
                                                    static_cast<std::int64_t>(o.batch), gathered,
                                                    reinterpret_cast<std::uint64_t*>(first_bad), nullptr));
        },
        [] {});
    for (void* p : {static_cast<void*>(table), static_cast<void*>(gathered), static_cast<void*>(rows),
                    static_cast<void*>(first_bad)})
      cudaFree(p);
    gathers.push_back({dim, gather_s});
    std::printf("dim %u: random row gather of %llu rows %.3f ms (%.0f GB/s of rows read + written)\n", dim,
                static_cast<unsigned long long>(o.batch), gather_s * 1e3,
                2.0 * static_cast<double>(o.batch) * dim * 4 / gather_s * 1e-9);

    for (const bool hybrid : o.memories) {
      Bench bench(dim, capacity, o.batch, hybrid);
      std::uint64_t inserted = 0;  // keys 0 .. inserted-1 of the run were inserted
      for (const double lf : o.load_factors) {
        const auto target = static_cast<std::uint64_t>(lf * static_cast<double>(capacity));
        while (inserted < target) {  // fill, untimed
          const std::uint64_t n = std::min(o.batch, target - inserted);
          make_keys<<<kGrid, kThreads>>>(bench.keys, n, inserted);
          bench.call(BatchOp::kUpsert, n);
          inserted += n;
        }
        BENCH_CHECK(cudaDeviceSynchronize());
        const std::uint64_t size = bench.size();  // below `inserted` where full buckets evicted
        bench.save();
        std::uint64_t fresh = 1ull << 62;  // new keys' indices: never among the inserted
        const auto fresh_batch = [&](double hit_rate) {
          return [&, hit_rate](int r) {
            make_batch<<<kGrid, kThreads>>>(bench.keys, o.batch, inserted, hit_rate, fresh,
                                            static_cast<std::uint64_t>(r) * 7919 + 1);
            fresh += o.batch;
          };
        };
        const auto record = [&](const char* op, double seconds) {
          results.push_back({op, dim, capacity, hybrid, lf, static_cast<double>(size) / static_cast<double>(capacity),
                             seconds, static_cast<double>(o.batch) / seconds * 1e-9, gather_s / seconds});
          std::printf("dim %u %s lf %.2f %-16s %.3f ms  %.3f B-KV/s  %.2f of the gather\n", dim,
                      hybrid ? "hybrid" : "pure", lf, op, seconds * 1e3, results.back().bkv_per_s,
                      results.back().fraction_of_gather);
        };
        record("find",
               time_median(
                   o.warmup, o.reps, fresh_batch(o.hit_rate), [&] { bench.call(BatchOp::kFind, o.batch); }, [] {}));
        const auto restore = [&] { bench.restore(); };
        record("insert_or_assign",
               time_median(
                   o.warmup, o.reps, fresh_batch(o.hit_rate), [&] { bench.call(BatchOp::kUpsert, o.batch); }, restore));
        record("find_or_insert", time_median(
                                     o.warmup, o.reps, fresh_batch(o.hit_rate),
                                     [&] { bench.call(BatchOp::kFindOrInsert, o.batch); }, restore));
        record("insert_and_evict", time_median(
                                       o.warmup, o.reps, fresh_batch(o.hit_rate),
                                       [&] { bench.call(BatchOp::kUpsert, o.batch, true); }, restore));
        if (lf == o.load_factors.front()) {
          // Skewed batches with duplicates: a find runs its keys apart; a find_or_insert runs a
          // bucket's keys in turn in one tile (the batch rule), so a hot key's duplicates are a
          // serial chain: the cost of not de-duplicating a batch first.
          const auto skewed = [&](int r) {
            make_skewed_batch<<<kGrid, kThreads>>>(bench.keys, o.batch, inserted, static_cast<std::uint64_t>(r) + 77);
          };
          record("find_skewed", time_median(
                                    o.warmup, o.reps, skewed, [&] { bench.call(BatchOp::kFind, o.batch); }, [] {}));
          record("find_or_insert_skewed",
                 time_median(
                     o.warmup, o.reps, skewed, [&] { bench.call(BatchOp::kFindOrInsert, o.batch); }, restore));
        }
      }
    }
  }

  std::printf("\n%-16s %4s %11s %6s %5s %10s %10s %9s\n", "op", "dim", "capacity", "memory", "lf", "ms", "B-KV/s",
              "of gather");
  for (const Result& r : results)
    std::printf("%-16s %4u %11llu %6s %5.2f %10.3f %10.3f %9.2f\n", r.op.c_str(), r.dim,
                static_cast<unsigned long long>(r.capacity), r.hybrid ? "hybrid" : "pure", r.load_factor,
                r.seconds * 1e3, r.bkv_per_s, r.fraction_of_gather);
  if (!o.json.empty()) {
    std::FILE* f = std::fopen(o.json.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "embscale_kv_table_bench: cannot write %s\n", o.json.c_str());
      return 1;
    }
    std::fprintf(f, "{\n  \"device\": \"%s\",\n  \"batch\": %llu,\n  \"hit_rate\": %.3f,\n  \"reps\": %d,\n", prop.name,
                 static_cast<unsigned long long>(o.batch), o.hit_rate, o.reps);
    std::fprintf(f, "  \"copy_gb_per_s\": %.1f,\n  \"gather_seconds\": {", copy_gbs);
    for (std::size_t i = 0; i < gathers.size(); ++i)
      std::fprintf(f, "%s\"%u\": %.6e", i ? ", " : "", gathers[i].first, gathers[i].second);
    std::fprintf(f, "},\n  \"results\": [\n");
    for (std::size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      std::fprintf(f,
                   "    {\"op\": \"%s\", \"dim\": %u, \"capacity\": %llu, \"load_factor\": %.2f, "
                   "\"size_per_slot\": %.4f, \"hybrid\": %s, \"seconds\": %.6e, \"keys_per_s\": %.6e, "
                   "\"bkv_per_s\": %.4f, "
                   "\"fraction_of_gather\": %.3f}%s\n",
                   r.op.c_str(), r.dim, static_cast<unsigned long long>(r.capacity), r.load_factor, r.size_per_slot,
                   r.hybrid ? "true" : "false", r.seconds, static_cast<double>(o.batch) / r.seconds, r.bkv_per_s,
                   r.fraction_of_gather, i + 1 < results.size() ? "," : "");
    }
    std::fprintf(f, "  ]\n}\n");
    std::fclose(f);
  }
  return 0;
}
