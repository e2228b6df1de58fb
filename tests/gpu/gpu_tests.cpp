// embscale_gpu_tests: the CUDA row gather of libembscale_cuda.so against the CPU gather
// embscale::gather_rows (lib/embedding/row_gather.hpp), on random data with fixed seeds.
//
// Standalone on purpose: links only the CUDA runtime and libembscale_cuda.so (no MPI, no HDF5,
// no libembscale), so it builds and runs on a GPU machine that has neither (scripts/gpu-check).
// Without a usable GPU it still checks the library's no-device and argument paths, then prints
// "SKIP: no CUDA device (cudaGetDeviceCount: ...)" and exits 77 (ctest SKIP_RETURN_CODE).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "device/families/row_gather.h"
#include "embedding/row_gather.hpp"
#include "gpu_check.hpp"

namespace {

using embscale::gpu_check::g_checks;
using embscale::gpu_check::g_failures;

std::string detail() { return embscale_cuda_last_error_detail(); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::vector<float> random_table(std::int64_t num_rows, std::int64_t dim, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> table(static_cast<std::size_t>(num_rows * dim));
  for (float& v : table) v = value(rng);
  return table;
}

std::vector<std::int64_t> random_rows(std::int64_t n, std::int64_t num_rows, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> rows(static_cast<std::size_t>(n));
  for (auto& r : rows) r = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(num_rows));
  return rows;
}

// Bit-exact comparison (a gather copies); reports the first difference.
bool same_bits(const std::vector<float>& got, const std::vector<float>& want, std::int64_t dim, const char* what) {
  if (got.size() != want.size()) {
    std::printf("  %s: size %zu, want %zu\n", what, got.size(), want.size());
    return false;
  }
  for (std::size_t k = 0; k < got.size(); ++k) {
    if (std::memcmp(&got[k], &want[k], sizeof(float)) != 0) {
      std::printf("  %s: out[%zu, %zu] = %g, want %g\n", what, k / static_cast<std::size_t>(dim),
                  k % static_cast<std::size_t>(dim), static_cast<double>(got[k]), static_cast<double>(want[k]));
      return false;
    }
  }
  return true;
}

std::vector<float> cpu_gather(const std::vector<float>& table, std::int64_t dim,
                              const std::vector<std::int64_t>& rows) {
  std::vector<float> out(rows.size() * static_cast<std::size_t>(dim));
  embscale::gather_rows(table.data(), static_cast<std::size_t>(dim), rows, out.data());
  return out;
}

// --- the core: families, streams, events, memory -----------------------------------------------

// What a stateful backend builds on, through the C ABI: a stream, device memory written by a
// memset and a copy in, read back by a copy out; events around a kernel timed; the families'
// versions as this build declares them.
void check_core_on_device() {
  int version = -1;
  CHECK(embscale_cuda_family_version("row_gather", &version) == EMBSCALE_CUDA_OK &&
            version == EMBSCALE_CUDA_ROW_GATHER_VERSION,
        "row_gather version %d", version);
  CHECK(embscale_cuda_family_version("no_such_family", &version) == EMBSCALE_CUDA_OK && version == 0,
        "an unknown family reports version %d", version);
  void* stream = nullptr;
  void* start = nullptr;
  void* end = nullptr;
  CHECK(embscale_cuda_stream_create(&stream) == EMBSCALE_CUDA_OK && stream != nullptr, "%s", detail().c_str());
  CHECK(embscale_cuda_event_create(&start) == EMBSCALE_CUDA_OK, "%s", detail().c_str());
  CHECK(embscale_cuda_event_create(&end) == EMBSCALE_CUDA_OK, "%s", detail().c_str());
  const std::int64_t n = 1 << 20;
  std::vector<std::int32_t> in(static_cast<std::size_t>(n)), out(in.size(), 0);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::int32_t>(i * 2654435761u);
  void* buffer = nullptr;
  const std::int64_t bytes = n * static_cast<std::int64_t>(sizeof(std::int32_t));
  CHECK(embscale_cuda_malloc(bytes, &buffer) == EMBSCALE_CUDA_OK && buffer != nullptr, "%s", detail().c_str());
  CHECK(embscale_cuda_event_record(start, stream) == EMBSCALE_CUDA_OK, "%s", detail().c_str());
  CHECK(embscale_cuda_memset_async(buffer, 0x5a, bytes, stream) == EMBSCALE_CUDA_OK, "%s", detail().c_str());
  CHECK(embscale_cuda_copy_async(out.data(), buffer, bytes, stream) == EMBSCALE_CUDA_OK, "%s", detail().c_str());
  CHECK(embscale_cuda_stream_synchronize(stream) == EMBSCALE_CUDA_OK, "%s", detail().c_str());
  CHECK(out[0] == 0x5a5a5a5a && out.back() == 0x5a5a5a5a, "memset then copy out read %x",
        static_cast<unsigned>(out[0]));
  CHECK(embscale_cuda_copy_async(buffer, in.data(), bytes, stream) == EMBSCALE_CUDA_OK, "%s", detail().c_str());
  CHECK(embscale_cuda_copy_async(out.data(), buffer, bytes, stream) == EMBSCALE_CUDA_OK, "%s", detail().c_str());
  CHECK(embscale_cuda_event_record(end, stream) == EMBSCALE_CUDA_OK, "%s", detail().c_str());
  CHECK(embscale_cuda_event_synchronize(end) == EMBSCALE_CUDA_OK, "%s", detail().c_str());
  CHECK(out == in, "a round trip through device memory changed the data");
  float ms = -1.0f;
  CHECK(embscale_cuda_event_elapsed_ms(start, end, &ms) == EMBSCALE_CUDA_OK && ms > 0.0f && ms < 1000.0f,
        "elapsed %f ms (%s)", static_cast<double>(ms), detail().c_str());
  CHECK(embscale_cuda_free(buffer) == EMBSCALE_CUDA_OK, "%s", detail().c_str());
  CHECK(embscale_cuda_event_destroy(start) == EMBSCALE_CUDA_OK && embscale_cuda_event_destroy(end) == EMBSCALE_CUDA_OK,
        "%s", detail().c_str());
  CHECK(embscale_cuda_stream_destroy(stream) == EMBSCALE_CUDA_OK, "%s", detail().c_str());
  std::printf("  core: family versions, a stream, events, device memory (4 MiB round trip in %.3f ms)\n",
              static_cast<double>(ms));
}

// --- checks that need no device ----------------------------------------------------------------

void check_without_device() {
  CHECK(embscale_cuda_abi_version() == EMBSCALE_CUDA_ABI_VERSION, "abi %d", embscale_cuda_abi_version());
  int count = -1;
  const int rc = embscale_cuda_device_count(&count);
  CHECK(rc == EMBSCALE_CUDA_NO_DEVICE && count == 0, "rc %d count %d", rc, count);
  CHECK(contains(detail(), "cudaGetDeviceCount"), "detail '%s'", detail().c_str());
  const std::vector<float> table(8, 1.0f);
  const std::vector<std::int64_t> rows{0, 1};
  std::vector<float> out(8);
  const int host_rc = embscale_cuda_gather_rows_host(table.data(), 2, 4, rows.data(), 2, out.data());
  CHECK(host_rc == EMBSCALE_CUDA_NO_DEVICE, "gather_rows_host rc %d (%s)", host_rc, detail().c_str());
  CHECK(std::string(embscale_cuda_error_string(EMBSCALE_CUDA_NO_DEVICE)) == "no CUDA device", "error string");
}

void check_arguments() {
  const std::vector<float> table(8, 1.0f);
  const std::vector<std::int64_t> rows{0, 1};
  std::vector<float> out(8);
  int rc = embscale_cuda_gather_rows_host(table.data(), 2, 4, rows.data(), -1, out.data());
  CHECK(rc == EMBSCALE_CUDA_INVALID_ARGUMENT, "negative n: rc %d", rc);
  CHECK(contains(detail(), "n = -1"), "detail '%s'", detail().c_str());
  rc = embscale_cuda_gather_rows_host(table.data(), 2, 4, nullptr, 2, out.data());
  CHECK(rc == EMBSCALE_CUDA_INVALID_ARGUMENT, "null rows: rc %d", rc);
  rc = embscale_cuda_gather_rows(table.data(), 2, -4, rows.data(), 2, out.data(), nullptr);
  CHECK(rc == EMBSCALE_CUDA_INVALID_ARGUMENT, "negative dim: rc %d", rc);
  rc = embscale_cuda_gather_rows_async(table.data(), 2, 4, rows.data(), 2, out.data(), nullptr, nullptr);
  CHECK(rc == EMBSCALE_CUDA_INVALID_ARGUMENT, "null flag: rc %d", rc);
  rc = embscale_cuda_gather_rows_host(table.data(), INT64_MAX / 2, 4, rows.data(), 2, out.data());
  CHECK(rc == EMBSCALE_CUDA_INVALID_ARGUMENT, "overflow: rc %d", rc);
  // n == 0 is a no-op, null pointers allowed, with or without a device.
  rc = embscale_cuda_gather_rows_host(nullptr, 0, 4, nullptr, 0, nullptr);
  CHECK(rc == EMBSCALE_CUDA_OK, "n = 0 (host): rc %d", rc);
  rc = embscale_cuda_gather_rows(nullptr, 0, 4, nullptr, 0, nullptr, nullptr);
  CHECK(rc == EMBSCALE_CUDA_OK, "n = 0 (device): rc %d", rc);
}

// --- checks on the device ---------------------------------------------------------------------

// Host API over many shapes: every vector width (float4, float2, float), every group size.
void check_host_gather() {
  const std::int64_t dims[] = {1, 2, 3, 4, 5, 7, 8, 16, 17, 31, 32, 64, 100, 128, 129, 256, 1000};
  const std::int64_t ns[] = {0, 1, 33, 1000, 50000};
  std::uint64_t seed = 1000;
  for (const std::int64_t dim : dims) {
    for (const std::int64_t n : ns) {
      const std::int64_t num_rows = 1 + static_cast<std::int64_t>(seed % 997);
      const auto table = random_table(num_rows, dim, ++seed);
      const auto rows = random_rows(n, num_rows, ++seed);
      std::vector<float> out(static_cast<std::size_t>(n * dim), std::nanf("1"));
      const int rc = embscale_cuda_gather_rows_host(table.data(), num_rows, dim, rows.data(), n, out.data());
      CHECK(rc == EMBSCALE_CUDA_OK, "dim %lld n %lld: rc %d (%s)", static_cast<long long>(dim),
            static_cast<long long>(n), rc, detail().c_str());
      CHECK(same_bits(out, cpu_gather(table, dim, rows), dim, "host gather"), "dim %lld n %lld",
            static_cast<long long>(dim), static_cast<long long>(n));
    }
  }
  // Large n: millions of rows, more than one grid-stride pass.
  const std::int64_t dim = 8, num_rows = 100003, n = std::int64_t{1} << 22;
  const auto table = random_table(num_rows, dim, 77);
  const auto rows = random_rows(n, num_rows, 78);
  std::vector<float> out(static_cast<std::size_t>(n * dim), std::nanf("1"));
  const int rc = embscale_cuda_gather_rows_host(table.data(), num_rows, dim, rows.data(), n, out.data());
  CHECK(rc == EMBSCALE_CUDA_OK, "large n: rc %d (%s)", rc, detail().c_str());
  CHECK(same_bits(out, cpu_gather(table, dim, rows), dim, "large n"), "large n");
  std::printf("  host gather: %zu dims x %zu sizes, and n = %lld\n", std::size(dims), std::size(ns),
              static_cast<long long>(n));
}

// Device API on a stream, with table and out offset so the float4 and float2 paths are refused
// (misaligned) and the fallbacks run; output poisoned first so an unwritten element shows.
void check_device_gather_alignments() {
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::uint64_t seed = 5000;
  for (const std::int64_t dim : {4, 8, 12, 64, 6, 10}) {
    for (const std::int64_t offset : {0, 1, 2}) {
      const std::int64_t num_rows = 5000, n = 20000;
      const auto table = random_table(num_rows, dim, ++seed);
      const auto rows = random_rows(n, num_rows, ++seed);
      float* d_table = nullptr;
      float* d_out = nullptr;
      std::int64_t* d_rows = nullptr;
      const auto table_bytes = static_cast<std::size_t>(num_rows * dim) * sizeof(float);
      const auto out_bytes = static_cast<std::size_t>(n * dim) * sizeof(float);
      CUDA_OK(cudaMalloc(&d_table, table_bytes + 16));
      CUDA_OK(cudaMalloc(&d_out, out_bytes + 16));
      CUDA_OK(cudaMalloc(&d_rows, static_cast<std::size_t>(n) * sizeof(std::int64_t)));
      CUDA_OK(cudaMemcpy(d_table + offset, table.data(), table_bytes, cudaMemcpyHostToDevice));
      CUDA_OK(
          cudaMemcpy(d_rows, rows.data(), static_cast<std::size_t>(n) * sizeof(std::int64_t), cudaMemcpyHostToDevice));
      CUDA_OK(cudaMemset(d_out, 0xff, out_bytes + 16));  // NaN everywhere
      const int rc = embscale_cuda_gather_rows(d_table + offset, num_rows, dim, d_rows, n, d_out + offset, stream);
      CHECK(rc == EMBSCALE_CUDA_OK, "dim %lld offset %lld: rc %d (%s)", static_cast<long long>(dim),
            static_cast<long long>(offset), rc, detail().c_str());
      std::vector<float> out(static_cast<std::size_t>(n * dim));
      CUDA_OK(cudaMemcpy(out.data(), d_out + offset, out_bytes, cudaMemcpyDeviceToHost));
      CHECK(same_bits(out, cpu_gather(table, dim, rows), dim, "device gather"), "dim %lld offset %lld",
            static_cast<long long>(dim), static_cast<long long>(offset));
      CUDA_OK(cudaFree(d_table));
      CUDA_OK(cudaFree(d_out));
      CUDA_OK(cudaFree(d_rows));
    }
  }
  CUDA_OK(cudaStreamDestroy(stream));
  std::printf("  device gather on a stream, aligned and misaligned\n");
}

// Out-of-range indices: reported, never read, their rows zero, the others right.
void check_bad_index() {
  const std::int64_t num_rows = 50, dim = 12, n = 1000;
  const auto table = random_table(num_rows, dim, 9);
  auto rows = random_rows(n, num_rows, 10);
  rows[700] = -1;
  rows[321] = num_rows;
  rows[999] = INT64_MAX;
  std::vector<float> out(static_cast<std::size_t>(n * dim), std::nanf("1"));
  const int rc = embscale_cuda_gather_rows_host(table.data(), num_rows, dim, rows.data(), n, out.data());
  CHECK(rc == EMBSCALE_CUDA_BAD_INDEX, "rc %d (%s)", rc, detail().c_str());
  CHECK(contains(detail(), "rows[321] = 50 is outside [0, 50)"), "detail '%s'", detail().c_str());
  auto want_rows = rows;
  for (auto& r : want_rows)
    if (r < 0 || r >= num_rows) r = 0;
  auto want = cpu_gather(table, dim, want_rows);
  for (const std::size_t bad : {321u, 700u, 999u})
    std::fill_n(want.begin() + static_cast<std::ptrdiff_t>(bad * dim), dim, 0.0f);
  CHECK(same_bits(out, want, dim, "bad index"), "valid rows gathered, bad rows zero");

  // The asynchronous form reports the first bad position through the device word.
  float* d_table = nullptr;
  float* d_out = nullptr;
  std::int64_t* d_rows = nullptr;
  std::uint64_t* d_first_bad = nullptr;
  CUDA_OK(cudaMalloc(&d_table, table.size() * sizeof(float)));
  CUDA_OK(cudaMalloc(&d_out, out.size() * sizeof(float)));
  CUDA_OK(cudaMalloc(&d_rows, rows.size() * sizeof(std::int64_t)));
  CUDA_OK(cudaMalloc(&d_first_bad, sizeof(std::uint64_t)));
  CUDA_OK(cudaMemcpy(d_table, table.data(), table.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemcpy(d_rows, rows.data(), rows.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(d_first_bad, 0xff, sizeof(std::uint64_t)));
  const int async_rc = embscale_cuda_gather_rows_async(d_table, num_rows, dim, d_rows, n, d_out, d_first_bad, nullptr);
  CHECK(async_rc == EMBSCALE_CUDA_OK, "async rc %d (%s)", async_rc, detail().c_str());
  CUDA_OK(cudaDeviceSynchronize());
  std::uint64_t first_bad = 0;
  CUDA_OK(cudaMemcpy(&first_bad, d_first_bad, sizeof first_bad, cudaMemcpyDeviceToHost));
  CHECK(first_bad == 321, "first bad position %llu", static_cast<unsigned long long>(first_bad));
  // All valid: the word stays UINT64_MAX.
  rows[321] = rows[700] = rows[999] = 0;
  CUDA_OK(cudaMemcpy(d_rows, rows.data(), rows.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  CUDA_OK(cudaMemset(d_first_bad, 0xff, sizeof(std::uint64_t)));
  CHECK(embscale_cuda_gather_rows_async(d_table, num_rows, dim, d_rows, n, d_out, d_first_bad, nullptr) ==
            EMBSCALE_CUDA_OK,
        "async rc (%s)", detail().c_str());
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(&first_bad, d_first_bad, sizeof first_bad, cudaMemcpyDeviceToHost));
  CHECK(first_bad == UINT64_MAX, "first bad position %llu with valid rows", static_cast<unsigned long long>(first_bad));
  // An empty table: every index is out of range.
  CHECK(embscale_cuda_gather_rows(d_table, 0, dim, d_rows, n, d_out, nullptr) == EMBSCALE_CUDA_BAD_INDEX,
        "empty table (%s)", detail().c_str());
  CUDA_OK(cudaFree(d_table));
  CUDA_OK(cudaFree(d_out));
  CUDA_OK(cudaFree(d_rows));
  CUDA_OK(cudaFree(d_first_bad));
  std::printf("  bad index reported, not read\n");
}

// Element offsets beyond 2^31 (64-bit index arithmetic): a table of more than 2^31 floats, only
// the gathered rows written. Skipped when the device lacks the memory.
void check_large_table() {
  for (const std::int64_t dim : {12, 9}) {
    const std::int64_t num_rows = (std::int64_t{1} << 31) / dim + 4096;
    const auto table_bytes = static_cast<std::size_t>(num_rows * dim) * sizeof(float);
    float* d_table = nullptr;
    if (cudaMalloc(&d_table, table_bytes) != cudaSuccess) {
      cudaGetLastError();
      std::printf("  large table (%zu bytes): not enough device memory, skipped\n", table_bytes);
      return;
    }
    const std::int64_t n = 256;
    std::vector<std::int64_t> rows(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) rows[static_cast<std::size_t>(i)] = num_rows - 1 - i * 7;
    const auto values = random_table(n, dim, 31);
    for (std::int64_t i = 0; i < n; ++i)
      CUDA_OK(cudaMemcpy(d_table + rows[static_cast<std::size_t>(i)] * dim, values.data() + i * dim,
                         static_cast<std::size_t>(dim) * sizeof(float), cudaMemcpyHostToDevice));
    float* d_out = nullptr;
    std::int64_t* d_rows = nullptr;
    CUDA_OK(cudaMalloc(&d_out, values.size() * sizeof(float)));
    CUDA_OK(cudaMalloc(&d_rows, rows.size() * sizeof(std::int64_t)));
    CUDA_OK(cudaMemcpy(d_rows, rows.data(), rows.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
    const int rc = embscale_cuda_gather_rows(d_table, num_rows, dim, d_rows, n, d_out, nullptr);
    CHECK(rc == EMBSCALE_CUDA_OK, "large table dim %lld: rc %d (%s)", static_cast<long long>(dim), rc,
          detail().c_str());
    std::vector<float> out(values.size());
    CUDA_OK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(same_bits(out, values, dim, "large table"), "dim %lld", static_cast<long long>(dim));
    CUDA_OK(cudaFree(d_table));
    CUDA_OK(cudaFree(d_out));
    CUDA_OK(cudaFree(d_rows));
  }
  std::printf("  large table: offsets beyond 2^31 floats\n");
}

}  // namespace

int main() {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  check_arguments();
  if (err != cudaSuccess || devices == 0) {
    check_without_device();
    if (g_failures > 0) {
      std::printf("%d of %d checks FAILED (without a device)\n", g_failures, g_checks);
      return 1;
    }
    std::printf("SKIP: no CUDA device (cudaGetDeviceCount: %s)\n",
                err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    return 77;
  }
  cudaDeviceProp prop{};
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  int runtime = 0, driver = 0;
  embscale_cuda_versions(&runtime, &driver);
  std::printf("device 0: %s (sm_%d%d), library built with CUDA runtime %d, driver supports %d\n", prop.name, prop.major,
              prop.minor, runtime, driver);
  int count = 0;
  CHECK(embscale_cuda_device_count(&count) == EMBSCALE_CUDA_OK && count == devices,
        "library counts %d devices, runtime %d (%s)", count, devices, detail().c_str());
  check_core_on_device();
  check_host_gather();
  check_device_gather_alignments();
  check_bad_index();
  check_large_table();
  if (g_failures > 0) {
    std::printf("%d of %d checks FAILED\n", g_failures, g_checks);
    return 1;
  }
  std::printf("PASS: %d checks\n", g_checks);
  return 0;
}
