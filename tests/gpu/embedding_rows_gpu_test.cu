// The embedding_rows family of libembscale_cuda.so (kernels/embedding_rows.cu) on a GPU against
// the same portable code on the host: the lookup of strided and several-range ownership (keys not
// owned reported at their first position), the gather, and an optimizer's apply and Global sweep
// over steps with rows touched and untouched. Bit for bit, but LazyGlobal Adam (one float ulp:
// its per-row pow() in double is the device's math library). DeviceStaticRowStore makes exactly
// these calls (its host side is tested on the stand-in in tests/embedding).
//
// Standalone (cudart and libembscale_cuda.so, no GoogleTest): exits 77 without a GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "device/families/embedding_rows.h"
#include "embedding/portable/optimizer_ref.hpp"
#include "embedding/portable/row_codec_ref.hpp"
#include "embedding/portable/rows_ref.hpp"
#include "gpu_check.hpp"
#include "optimizer_refs.hpp"

namespace {

namespace portable = embscale::embedding::portable;
using portable::OptimizerKind;

using embscale::gpu_check::at_step;
using embscale::gpu_check::DeviceArray;
using embscale::gpu_check::ref_of;
using embscale::gpu_check::ulps_apart;

const std::vector<portable::OwnedRange> kRanges = {{1, 9001, 3, 0}, {10000, 14000, 1, 3000}};  // 3000 + 4000 rows
constexpr std::int64_t kRows = 7000;

void check_lookup_and_gather() {
  std::vector<std::int64_t> keys;
  for (std::int64_t k = 0; k < 15000; k += 7) keys.push_back(k);
  const DeviceArray<portable::OwnedRange> d_ranges(kRanges);
  const DeviceArray<std::int64_t> d_keys(keys), d_rows(keys.size());
  const DeviceArray<std::uint64_t> d_first_bad(std::vector<std::uint64_t>{UINT64_MAX});
  ABI_OK(embscale_cuda_embedding_rows_index(d_ranges.get(), kRanges.size(), d_keys.get(), keys.size(), d_rows.get(),
                                            d_first_bad.get(), nullptr));
  const auto rows = d_rows.download();
  std::uint64_t first_bad = UINT64_MAX;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::int64_t want = portable::row_of(kRanges.data(), kRanges.size(), keys[i]);
    CHECK(rows[i] == want, "key %lld: row %lld, expected %lld", static_cast<long long>(keys[i]),
          static_cast<long long>(rows[i]), static_cast<long long>(want));
    if (want < 0 && first_bad == UINT64_MAX) first_bad = i;
  }
  const std::uint64_t device_first_bad = d_first_bad.download()[0];
  CHECK(device_first_bad == first_bad, "first key not owned at %llu, expected %llu",
        static_cast<unsigned long long>(device_first_bad), static_cast<unsigned long long>(first_bad));
  // The gather of the owned ones, out of a table whose value is its position.
  constexpr std::uint64_t width = 9, dim = 5;
  std::vector<float> table(kRows * width);
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i);
  std::vector<std::int64_t> owned_rows;
  for (const auto r : rows)
    if (r >= 0) owned_rows.push_back(r);
  const DeviceArray<float> d_table(table), d_out(owned_rows.size() * dim);
  const DeviceArray<std::int64_t> d_owned(owned_rows);
  ABI_OK(embscale_cuda_embedding_rows_gather(d_table.get(), width, dim, d_owned.get(), owned_rows.size(), d_out.get(),
                                             nullptr));
  const auto out = d_out.download();
  bool same = true;
  for (std::size_t i = 0; i < owned_rows.size(); ++i)
    for (std::size_t d = 0; d < dim; ++d)
      same = same && out[i * dim + d] == table[static_cast<std::size_t>(owned_rows[i]) * width + d];
  CHECK(same, "the gathered rows differ");
}

void check_updates(OptimizerKind kind, bool global, std::mt19937_64& random) {
  constexpr std::size_t dim = 16;
  auto o = ref_of(kind, global, static_cast<int>(dim));
  const std::size_t width = dim + static_cast<std::size_t>(o.state_width);
  std::normal_distribution<float> value(0.0f, 0.5f);
  std::vector<float> table(kRows * width);
  for (std::int64_t r = 0; r < kRows; ++r) {
    float* row = table.data() + static_cast<std::size_t>(r) * width;
    for (std::size_t d = 0; d < dim; ++d) row[d] = value(random);
    portable::init_state_row(o, row + dim, dim);
  }
  const DeviceArray<float> d_table(table);
  const DeviceArray<std::uint8_t> d_touched(std::vector<std::uint8_t>(kRows, 0));
  std::int64_t worst = 0;
  const bool lazy = kind == OptimizerKind::kLazyAdam;
  for (std::int64_t step = 1; step <= 5; ++step) {
    at_step(o, step);
    std::vector<std::int64_t> rows;
    for (std::int64_t r = step; r < kRows; r += 13) rows.push_back(r);
    std::shuffle(rows.begin(), rows.end(), random);
    std::vector<float> grads(rows.size() * dim);
    for (auto& g : grads) g = value(random);
    const DeviceArray<std::int64_t> d_rows(rows);
    const DeviceArray<float> d_grads(grads);
    ABI_OK(embscale_cuda_embedding_rows_apply(&o, d_table.get(), width, dim, d_rows.get(), d_grads.get(), rows.size(),
                                              global ? d_touched.get() : nullptr, nullptr));
    if (global)
      ABI_OK(embscale_cuda_embedding_rows_sweep(&o, d_table.get(), width, dim, kRows, d_touched.get(), nullptr));
    std::vector<std::uint8_t> touched(kRows, 0);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      float* row = table.data() + static_cast<std::size_t>(rows[i]) * width;
      portable::update_row(o, row, row + dim, grads.data() + i * dim, dim);
      touched[static_cast<std::size_t>(rows[i])] = 1;
    }
    if (global)
      for (std::int64_t r = 0; r < kRows; ++r)
        if (!touched[static_cast<std::size_t>(r)])
          portable::untouched_row(o, table.data() + static_cast<std::size_t>(r) * width,
                                  table.data() + static_cast<std::size_t>(r) * width + dim, dim);
    const auto device = d_table.download();
    if (lazy) {
      for (std::size_t i = 0; i < table.size(); ++i) worst = std::max(worst, ulps_apart(device[i], table[i]));
      table = device;  // carry on from the device's values
    } else {
      CHECK(device == table, "kind %d global %d step %lld: the table differs", static_cast<int>(kind), global,
            static_cast<long long>(step));
    }
    if (global) CHECK(d_touched.download() == std::vector<std::uint8_t>(kRows, 0), "the sweep left flags set");
  }
  if (lazy) CHECK(worst <= 1, "LazyGlobal Adam: %lld ulps apart (at most 1)", static_cast<long long>(worst));
}

// 16-bit rows (fp16, or bf16): gather decodes, apply and the sweep decode, update and round back,
// as the host loop does with the same codec; bit for bit (AdaGrad, Global: both kernels).
void check_sixteen_bits(bool bfloat, std::mt19937_64& random) {
  constexpr std::size_t dim = 16;
  auto o = ref_of(OptimizerKind::kAdaGrad, true, static_cast<int>(dim));
  const std::size_t width = dim + static_cast<std::size_t>(o.state_width);
  std::normal_distribution<float> value(0.0f, 0.5f);
  std::vector<std::uint16_t> table(kRows * width);
  // Room for the widest state (LazyGlobal Adam's 2 x dim and its step digits): update_row's other
  // kinds are compiled in too, and the compiler checks their indices against this size.
  std::vector<float> row(8 * dim);
  for (std::int64_t r = 0; r < kRows; ++r) {
    for (std::size_t d = 0; d < dim; ++d) row[d] = value(random);
    portable::init_state_row(o, row.data() + dim, dim);
    for (std::size_t c = 0; c < width; ++c)
      table[static_cast<std::size_t>(r) * width + c] = portable::encode16(row[c], bfloat);
  }
  const DeviceArray<std::uint16_t> d_table(table);
  const DeviceArray<std::uint8_t> d_touched(std::vector<std::uint8_t>(kRows, 0));
  for (std::int64_t step = 1; step <= 3; ++step) {
    at_step(o, step);
    std::vector<std::int64_t> rows;
    for (std::int64_t r = step; r < kRows; r += 17) rows.push_back(r);
    std::shuffle(rows.begin(), rows.end(), random);
    std::vector<float> grads(rows.size() * dim);
    for (auto& g : grads) g = value(random);
    const DeviceArray<std::int64_t> d_rows(rows);
    const DeviceArray<float> d_grads(grads), d_scratch(rows.size() * width), d_sweep(1000 * width);
    ABI_OK(embscale_cuda_embedding_rows_apply16(&o, d_table.get(), bfloat, width, dim, d_rows.get(), d_grads.get(),
                                                rows.size(), d_touched.get(), d_scratch.get(), nullptr));
    for (std::uint64_t first = 0; first < kRows; first += 1000)
      ABI_OK(embscale_cuda_embedding_rows_sweep16(&o, d_table.get(), bfloat, width, dim, first,
                                                  std::min<std::uint64_t>(1000, kRows - first), d_touched.get(),
                                                  d_sweep.get(), nullptr));
    std::vector<std::uint8_t> touched(kRows, 0);
    const auto update = [&](std::int64_t r, const float* g) {
      std::uint16_t* stored = table.data() + static_cast<std::size_t>(r) * width;
      for (std::size_t c = 0; c < width; ++c) row[c] = portable::decode16(stored[c], bfloat);
      if (g) portable::update_row(o, row.data(), row.data() + dim, g, dim);
      else portable::untouched_row(o, row.data(), row.data() + dim, dim);
      for (std::size_t c = 0; c < width; ++c) stored[c] = portable::encode16(row[c], bfloat);
    };
    for (std::size_t i = 0; i < rows.size(); ++i) {
      update(rows[i], grads.data() + i * dim);
      touched[static_cast<std::size_t>(rows[i])] = 1;
    }
    for (std::int64_t r = 0; r < kRows; ++r)
      if (!touched[static_cast<std::size_t>(r)]) update(r, nullptr);
    CHECK(d_table.download() == table, "16-bit (bf16 %d) step %lld: the table differs", bfloat ? 1 : 0,
          static_cast<long long>(step));
    std::vector<float> want(rows.size() * dim);
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (std::size_t d = 0; d < dim; ++d)
        want[i * dim + d] = portable::decode16(table[static_cast<std::size_t>(rows[i]) * width + d], bfloat);
    const DeviceArray<float> d_out(rows.size() * dim);
    ABI_OK(embscale_cuda_embedding_rows_gather16(d_table.get(), bfloat, width, dim, d_rows.get(), rows.size(),
                                                 d_out.get(), nullptr));
    CHECK(d_out.download() == want, "16-bit (bf16 %d) step %lld: the gathered rows differ", bfloat ? 1 : 0,
          static_cast<long long>(step));
  }
}

// A replica's gradient: distinct owned keys' gradients scattered into the dense table gradient
// (0 + g) with touch flags, then the touched rows selected in row order with their keys.
void check_replica_gradient(std::mt19937_64& random) {
  constexpr std::uint64_t dim = 5;
  std::vector<std::int64_t> keys;
  for (std::int64_t k = 1; k < 9001; k += 3 * 7) keys.push_back(k);
  for (std::int64_t k = 10000; k < 14000; k += 11) keys.push_back(k);
  std::shuffle(keys.begin(), keys.end(), random);
  std::normal_distribution<float> value(0.0f, 0.5f);
  std::vector<float> grads(keys.size() * dim);
  for (auto& g : grads) g = value(random);
  std::vector<float> want_table(kRows * dim, 0.0f);
  std::vector<std::int32_t> want_touched(kRows, 0);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::int64_t r = portable::row_of(kRanges.data(), kRanges.size(), keys[i]);
    for (std::uint64_t d = 0; d < dim; ++d)
      want_table[static_cast<std::uint64_t>(r) * dim + d] = 0.0f + grads[i * dim + d];
    want_touched[static_cast<std::size_t>(r)] = 1;
  }
  std::vector<std::int64_t> want_keys;
  std::vector<float> want_grads;
  for (std::int64_t r = 0; r < kRows; ++r)
    if (want_touched[static_cast<std::size_t>(r)]) {
      want_keys.push_back(portable::key_of(kRanges.data(), kRanges.size(), r));
      want_grads.insert(want_grads.end(), want_table.begin() + r * static_cast<std::int64_t>(dim),
                        want_table.begin() + (r + 1) * static_cast<std::int64_t>(dim));
    }
  const DeviceArray<portable::OwnedRange> d_ranges(kRanges);
  const DeviceArray<std::int64_t> d_keys(keys), d_selected_keys(kRows);
  const DeviceArray<float> d_grads(grads), d_table(std::vector<float>(kRows * dim, 0.0f)), d_selected(kRows * dim);
  const DeviceArray<std::int32_t> d_touched(std::vector<std::int32_t>(kRows, 0));
  const DeviceArray<std::uint64_t> d_count(1);
  std::uint64_t bytes = 0;
  ABI_OK(embscale_cuda_embedding_rows_select_scratch(kRows, &bytes));
  const DeviceArray<char> scratch(bytes);
  ABI_OK(embscale_cuda_embedding_rows_scatter(d_ranges.get(), kRanges.size(), d_keys.get(), keys.size(), d_grads.get(),
                                              dim, d_table.get(), d_touched.get(), nullptr));
  ABI_OK(embscale_cuda_embedding_rows_select(d_ranges.get(), kRanges.size(), d_touched.get(), d_table.get(), dim, kRows,
                                             d_selected_keys.get(), d_selected.get(), d_count.get(), scratch.get(),
                                             nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  CHECK(d_table.download() == want_table && d_touched.download() == want_touched,
        "scatter: the table gradient differs");
  const std::uint64_t n = d_count.download()[0];
  auto got_keys = d_selected_keys.download();
  auto got_grads = d_selected.download();
  got_keys.resize(n);
  got_grads.resize(n * dim);
  CHECK(got_keys == want_keys && got_grads == want_grads, "select: %llu rows, expected %zu, or their values differ",
        static_cast<unsigned long long>(n), want_keys.size());
}

}  // namespace

int main() {
  if (embscale::gpu_check::no_gpu()) return 77;
  std::uint64_t range_bytes = 0, optimizer_bytes = 0;
  ABI_OK(embscale_cuda_embedding_rows_layout(&range_bytes, &optimizer_bytes));
  CHECK(range_bytes == sizeof(portable::OwnedRange) && optimizer_bytes == sizeof(portable::OptimizerRef),
        "the library's layouts differ from this test's");
  check_lookup_and_gather();
  std::mt19937_64 random(20261128);
  for (const auto kind : {OptimizerKind::kSgd, OptimizerKind::kMomentum, OptimizerKind::kNesterov, OptimizerKind::kAdam,
                          OptimizerKind::kLazyAdam, OptimizerKind::kAdaGrad, OptimizerKind::kRowWiseAdaGrad})
    for (const bool global : {false, true}) check_updates(kind, global, random);
  for (const bool bfloat : {false, true}) check_sixteen_bits(bfloat, random);
  check_replica_gradient(random);
  std::printf("embedding_rows: %d of %d checks failed\n", embscale::gpu_check::g_failures,
              embscale::gpu_check::g_checks);
  return embscale::gpu_check::g_failures == 0 ? 0 : 1;
}
