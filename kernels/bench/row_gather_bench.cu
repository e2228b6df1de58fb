// Row gather bandwidth against the machine's own limit, measured in the same run.
//
//   embscale_row_gather_bench [--dims 16,32,64,128,256] [--n 2097152] [--table-mib 4096]
//                             [--copy-mib 1024] [--reps 30] [--warmup 5] [--sets 4]
//
// For each dim: a table of table-mib MiB (rows of dim random floats, larger than L2), `sets`
// independent sets of n uniform random row indices (timed in rotation, so no run re-reads the
// rows the previous one left in L2), embscale_cuda_gather_rows_async timed with CUDA events,
// median of reps after warmup. Bytes counted: n * dim * 4 read + n * dim * 4 written + n * 8
// indices read. The limit: cudaMemcpy device-to-device of copy-mib MiB, counting bytes read
// plus written, same timing. Prints both and the ratio; the last lines are a table.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_check.cuh"
#include "device/families/row_gather.h"

namespace {

__host__ __device__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Random floats in [-1, 1) so the timed data is never all zeros.
__global__ void fill_random_floats(float* data, std::int64_t count, std::uint64_t seed) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::uint64_t bits = splitmix64(seed ^ static_cast<std::uint64_t>(i));
    data[i] = static_cast<float>(bits >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }
}

__global__ void fill_random_rows(std::int64_t* rows, std::int64_t n, std::int64_t num_rows, std::uint64_t seed) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    rows[i] = static_cast<std::int64_t>(splitmix64(seed + static_cast<std::uint64_t>(i)) %
                                        static_cast<std::uint64_t>(num_rows));
}

struct Options {
  std::vector<std::int64_t> dims{16, 32, 64, 128, 256};
  std::int64_t n = std::int64_t{1} << 21;
  std::int64_t table_mib = 4096;
  std::int64_t copy_mib = 1024;
  int reps = 30;
  int warmup = 5;
  int sets = 4;
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--dims 16,32,64,128,256] [--n N] [--table-mib MiB] [--copy-mib MiB]\n"
               "          [--reps R] [--warmup W] [--sets S]\n",
               argv0);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") usage(argv[0]);
    if (i + 1 >= argc) usage(argv[0]);
    const std::string value = argv[++i];
    if (arg == "--dims") {
      o.dims.clear();
      std::size_t pos = 0;
      while (pos <= value.size()) {
        const std::size_t comma = std::min(value.find(',', pos), value.size());
        o.dims.push_back(std::stoll(value.substr(pos, comma - pos)));
        pos = comma + 1;
      }
    } else if (arg == "--n") {
      o.n = std::stoll(value);
    } else if (arg == "--table-mib") {
      o.table_mib = std::stoll(value);
    } else if (arg == "--copy-mib") {
      o.copy_mib = std::stoll(value);
    } else if (arg == "--reps") {
      o.reps = std::stoi(value);
    } else if (arg == "--warmup") {
      o.warmup = std::stoi(value);
    } else if (arg == "--sets") {
      o.sets = std::stoi(value);
    } else {
      usage(argv[0]);
    }
  }
  if (o.n <= 0 || o.table_mib <= 0 || o.copy_mib <= 0 || o.reps <= 0 || o.warmup < 0 || o.sets <= 0) usage(argv[0]);
  for (const std::int64_t d : o.dims)
    if (d <= 0) usage(argv[0]);
  return o;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Median seconds of `reps` timed calls of fn(rep) after `warmup` untimed ones.
template <typename Fn> double time_median(int warmup, int reps, cudaStream_t stream, Fn&& fn) {
  cudaEvent_t start, stop;
  BENCH_CHECK(cudaEventCreate(&start));
  BENCH_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < warmup; ++i) fn(i);
  BENCH_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> seconds;
  for (int i = 0; i < reps; ++i) {
    BENCH_CHECK(cudaEventRecord(start, stream));
    fn(warmup + i);
    BENCH_CHECK(cudaEventRecord(stop, stream));
    BENCH_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    BENCH_CHECK(cudaEventElapsedTime(&ms, start, stop));
    seconds.push_back(static_cast<double>(ms) * 1e-3);
  }
  BENCH_CHECK(cudaEventDestroy(start));
  BENCH_CHECK(cudaEventDestroy(stop));
  return median(seconds);
}

struct Row {
  std::int64_t dim, num_rows;
  double seconds, gbps, ratio;
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  int devices = 0;
  if (const cudaError_t err = cudaGetDeviceCount(&devices); err != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device (cudaGetDeviceCount: %s)\n",
                err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    return 77;
  }
  cudaDeviceProp prop{};
  BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, L2 %d MiB, %.1f GiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20,
              static_cast<double>(prop.totalGlobalMem) / (1 << 30));

  cudaStream_t stream;
  BENCH_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  // The limit: a large device-to-device copy, bytes read + written.
  const auto copy_bytes = static_cast<std::size_t>(o.copy_mib) << 20;
  void* copy_src = nullptr;
  void* copy_dst = nullptr;
  BENCH_CHECK(cudaMalloc(&copy_src, copy_bytes));
  BENCH_CHECK(cudaMalloc(&copy_dst, copy_bytes));
  fill_random_floats<<<1024, 256, 0, stream>>>(static_cast<float*>(copy_src), static_cast<std::int64_t>(copy_bytes / 4),
                                               1);
  BENCH_CHECK(cudaGetLastError());
  const double copy_s = time_median(o.warmup, o.reps, stream, [&](int) {
    BENCH_CHECK(cudaMemcpyAsync(copy_dst, copy_src, copy_bytes, cudaMemcpyDeviceToDevice, stream));
  });
  const double copy_gbps = 2.0 * static_cast<double>(copy_bytes) / copy_s * 1e-9;
  std::printf("cudaMemcpy D2D %lld MiB: %.3f ms, %.1f GB/s (read + written)\n", static_cast<long long>(o.copy_mib),
              copy_s * 1e3, copy_gbps);
  BENCH_CHECK(cudaFree(copy_src));
  BENCH_CHECK(cudaFree(copy_dst));

  std::uint64_t* d_first_bad = nullptr;
  BENCH_CHECK(cudaMalloc(&d_first_bad, sizeof(std::uint64_t)));
  std::vector<Row> results;
  std::mt19937_64 rng(20261122);
  for (const std::int64_t dim : o.dims) {
    const std::int64_t row_bytes = dim * 4;
    const std::int64_t num_rows = std::max<std::int64_t>(1, (o.table_mib << 20) / row_bytes);
    float* table = nullptr;
    float* out = nullptr;
    std::int64_t* rows = nullptr;
    BENCH_CHECK(cudaMalloc(&table, static_cast<std::size_t>(num_rows * row_bytes)));
    BENCH_CHECK(cudaMalloc(&out, static_cast<std::size_t>(o.n * row_bytes)));
    BENCH_CHECK(cudaMalloc(&rows, static_cast<std::size_t>(o.n * o.sets) * sizeof(std::int64_t)));
    fill_random_floats<<<1024, 256, 0, stream>>>(table, num_rows * dim, rng());
    BENCH_CHECK(cudaGetLastError());
    for (int s = 0; s < o.sets; ++s) {
      fill_random_rows<<<1024, 256, 0, stream>>>(rows + s * o.n, o.n, num_rows, rng());
      BENCH_CHECK(cudaGetLastError());
    }
    BENCH_CHECK(cudaMemsetAsync(d_first_bad, 0xff, sizeof(std::uint64_t), stream));
    const double s = time_median(o.warmup, o.reps, stream, [&](int rep) {
      const std::int64_t* set = rows + (rep % o.sets) * o.n;
      const int rc = embscale_cuda_gather_rows_async(table, num_rows, dim, set, o.n, out, d_first_bad, stream);
      if (rc != EMBSCALE_CUDA_OK) {
        std::fprintf(stderr, "gather failed: %s: %s\n", embscale_cuda_error_string(rc),
                     embscale_cuda_last_error_detail());
        std::exit(1);
      }
    });
    // Check the last set's result at a sample of positions, and that no index was flagged.
    std::uint64_t first_bad = 0;
    BENCH_CHECK(cudaMemcpy(&first_bad, d_first_bad, sizeof first_bad, cudaMemcpyDeviceToHost));
    if (first_bad != UINT64_MAX) {
      std::fprintf(stderr, "gather flagged position %llu as out of range\n",
                   static_cast<unsigned long long>(first_bad));
      return 1;
    }
    const int last_set = (o.warmup + o.reps - 1) % o.sets;
    std::vector<float> got(static_cast<std::size_t>(dim)), want(static_cast<std::size_t>(dim));
    for (int k = 0; k < 64; ++k) {
      const std::int64_t i = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(o.n));
      std::int64_t r = 0;
      BENCH_CHECK(cudaMemcpy(&r, rows + last_set * o.n + i, sizeof r, cudaMemcpyDeviceToHost));
      BENCH_CHECK(
          cudaMemcpy(want.data(), table + r * dim, static_cast<std::size_t>(row_bytes), cudaMemcpyDeviceToHost));
      BENCH_CHECK(cudaMemcpy(got.data(), out + i * dim, static_cast<std::size_t>(row_bytes), cudaMemcpyDeviceToHost));
      if (std::memcmp(got.data(), want.data(), static_cast<std::size_t>(row_bytes)) != 0) {
        std::fprintf(stderr, "dim %lld: out row %lld differs from table row %lld\n", static_cast<long long>(dim),
                     static_cast<long long>(i), static_cast<long long>(r));
        return 1;
      }
    }
    const double bytes = 2.0 * static_cast<double>(o.n * row_bytes) + 8.0 * static_cast<double>(o.n);
    const double gbps = bytes / s * 1e-9;
    results.push_back({dim, num_rows, s, gbps, gbps / copy_gbps});
    BENCH_CHECK(cudaFree(table));
    BENCH_CHECK(cudaFree(out));
    BENCH_CHECK(cudaFree(rows));
  }
  BENCH_CHECK(cudaFree(d_first_bad));
  BENCH_CHECK(cudaStreamDestroy(stream));

  std::printf(
      "\nrow gather, n = %lld rows per call, table %lld MiB, uniform random indices, "
      "median of %d after %d warm-up, %d index sets\n",
      static_cast<long long>(o.n), static_cast<long long>(o.table_mib), o.reps, o.warmup, o.sets);
  std::printf("%6s %12s %10s %10s %10s %8s\n", "dim", "table_rows", "time_us", "GB/s", "copy_GB/s", "ratio");
  for (const Row& r : results)
    std::printf("%6lld %12lld %10.1f %10.1f %10.1f %8.3f\n", static_cast<long long>(r.dim),
                static_cast<long long>(r.num_rows), r.seconds * 1e6, r.gbps, copy_gbps, r.ratio);
  return 0;
}
