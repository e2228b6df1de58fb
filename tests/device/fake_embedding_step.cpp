/* The stand-in library's embedding_step family (device/families/embedding_step.h) on host memory:
 * plain loops that follow the header's definitions, with the portable rules the kernels call
 * (embedding/portable/step_ref.hpp). So the device exchange's host side (its buffers, sizes,
 * syncs and collectives) runs in CI through the seam as on a GPU, and its results are compared
 * with the host engine's (tests/embedding/device_pooled_exchange_mpi_test.cpp). It reports the
 * kernels' scratch size and checks the caller's scratch against it. Left out with
 * EMBSCALE_FAKE_OMIT_EMBEDDING_STEP (a library without the family). */
#ifndef EMBSCALE_FAKE_OMIT_EMBEDDING_STEP

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "device/families/embedding_step.h"
#include "embedding/portable/step_ref.hpp"
#include "fake_device_memory.hpp"

namespace portable = embscale::embedding::portable;

using embscale::fake::on_device;

namespace {

// What the stand-in claims its kernels need (so that a caller's sizing is exercised).
uint64_t scratch_bytes(uint64_t n, uint64_t positions) { return 16 * n + 8 * positions + 256; }

}  // namespace

extern "C" {

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_layout(uint64_t* owner_bytes, uint64_t* placement_bytes,
                                                             uint64_t* pair_bytes) {
  if (!owner_bytes || !placement_bytes || !pair_bytes) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  *owner_bytes = sizeof(portable::OwnerRef);
  *placement_bytes = sizeof(portable::PlacementRef);
  *pair_bytes = sizeof(portable::KeyPosition);
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_scratch(uint64_t n, uint64_t positions, uint64_t* bytes) {
  if (!bytes) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  *bytes = scratch_bytes(n, positions);
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_route(const void* owner, const void* placement, int every_rank,
                                                            int32_t ranks, const int64_t* keys, uint64_t n,
                                                            const int64_t* offsets, uint64_t bags, int32_t slots,
                                                            void* pairs, uint64_t* counts, void* scratch,
                                                            void* stream) {
  (void)stream;
  if (!owner || !placement || ranks < 1 || slots < 1 || !offsets || !counts ||
      (n > 0 && (!keys || !pairs || (!every_rank && !scratch))))
    return EMBSCALE_CUDA_INVALID_ARGUMENT;
  const uint64_t total = every_rank ? n * static_cast<uint64_t>(ranks) : n;
  int code = EMBSCALE_CUDA_OK;
  if (!on_device({{keys, n * sizeof(int64_t)},
                  {offsets, (bags + 1) * sizeof(int64_t)},
                  {pairs, total * sizeof(portable::KeyPosition)},
                  {counts, static_cast<uint64_t>(ranks) * sizeof(uint64_t)},
                  {scratch, scratch_bytes(n, 0)}},
                 "embedding_step_route", code))
    return code;
  const auto& rule = *static_cast<const portable::OwnerRef*>(owner);
  const auto& place = *static_cast<const portable::PlacementRef*>(placement);
  std::vector<std::vector<portable::KeyPosition>> groups(static_cast<std::size_t>(ranks));
  for (uint64_t b = 0; b < bags; ++b) {
    const auto sample = static_cast<int64_t>(b / static_cast<uint64_t>(slots));
    const auto slot = static_cast<int32_t>(b % static_cast<uint64_t>(slots));
    for (int64_t k = offsets[b]; k < offsets[b + 1]; ++k) {
      const int64_t key = keys[k];
      if (every_rank) {
        for (int32_t d = 0; d < ranks; ++d)
          groups[static_cast<std::size_t>(d)].push_back({key, portable::position_of(place, d, sample, slot)});
      } else {
        const int d = portable::owner_of(rule, key, slot);
        if (d < 0 || d >= ranks) continue;  // left out, counted nowhere (the header's rule)
        groups[static_cast<std::size_t>(d)].push_back({key, portable::position_of(place, d, sample, slot)});
      }
    }
  }
  auto* out = static_cast<portable::KeyPosition*>(pairs);
  for (int32_t d = 0; d < ranks; ++d) {
    const auto& g = groups[static_cast<std::size_t>(d)];
    counts[d] = g.size();
    out = std::copy(g.begin(), g.end(), out);
  }
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_unique(const int64_t* keys, uint64_t stride, uint64_t n,
                                                             int64_t* distinct, uint64_t* count, uint32_t* inverse,
                                                             uint32_t* by_key, uint32_t* key_begin, void* scratch,
                                                             void* stream) {
  (void)stream;
  if (!count || !key_begin || stride < 1 || (n > 0 && (!keys || !distinct || !inverse || !by_key || !scratch)))
    return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  if (!on_device({{keys, n == 0 ? 0 : ((n - 1) * stride + 1) * sizeof(int64_t)},
                  {distinct, n * sizeof(int64_t)},
                  {count, sizeof(uint64_t)},
                  {inverse, n * sizeof(uint32_t)},
                  {by_key, n * sizeof(uint32_t)},
                  {key_begin, (n + 1) * sizeof(uint32_t)},
                  {scratch, scratch_bytes(n, 0)}},
                 "embedding_step_unique", code))
    return code;
  std::map<int64_t, std::vector<uint32_t>> of_key;  // ascending keys, each with its positions in order
  for (uint64_t j = 0; j < n; ++j) of_key[keys[j * stride]].push_back(static_cast<uint32_t>(j));
  uint32_t i = 0, at = 0;
  for (const auto& [key, js] : of_key) {
    distinct[i] = key;
    key_begin[i] = at;
    for (const auto j : js) {
      inverse[j] = i;
      by_key[at++] = j;
    }
    ++i;
  }
  key_begin[i] = at;
  *count = i;
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_group(const void* owner, int32_t ranks, const int64_t* keys,
                                                            uint64_t n, int64_t* grouped, uint32_t* order,
                                                            uint64_t* counts, void* scratch, void* stream) {
  (void)stream;
  if (!owner || ranks < 1 || !counts || (n > 0 && (!keys || !grouped || !order || !scratch)))
    return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  if (!on_device({{keys, n * sizeof(int64_t)},
                  {grouped, n * sizeof(int64_t)},
                  {order, n * sizeof(uint32_t)},
                  {counts, static_cast<uint64_t>(ranks) * sizeof(uint64_t)},
                  {scratch, scratch_bytes(n, 0)}},
                 "embedding_step_group", code))
    return code;
  const auto& rule = *static_cast<const portable::OwnerRef*>(owner);
  std::vector<std::vector<uint32_t>> groups(static_cast<std::size_t>(ranks) + 1);
  for (uint64_t i = 0; i < n; ++i) {
    const int d = portable::owner_of(rule, keys[i], 0);
    groups[d < 0 || d >= ranks ? static_cast<std::size_t>(ranks) : static_cast<std::size_t>(d)].push_back(
        static_cast<uint32_t>(i));  // an owner outside [0, ranks): last, counted nowhere
  }
  uint64_t p = 0;
  for (int32_t d = 0; d <= ranks; ++d) {
    if (d < ranks) counts[d] = groups[static_cast<std::size_t>(d)].size();
    for (const auto i : groups[static_cast<std::size_t>(d)]) {
      grouped[p] = keys[i];
      order[p++] = i;
    }
  }
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_permute(const float* in, const uint32_t* index, uint64_t n,
                                                              uint64_t width, int scatter, float* out, void* stream) {
  (void)stream;
  if (n == 0 || width == 0) return EMBSCALE_CUDA_OK;
  if (!in || !index || !out) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  if (!on_device({{index, n * sizeof(uint32_t)}}, "embedding_step_permute", code)) return code;
  for (uint64_t p = 0; p < n; ++p) {
    const float* from = in + (scatter ? p : uint64_t{index[p]}) * width;
    float* to = out + (scatter ? uint64_t{index[p]} : p) * width;
    if (!on_device({{from, width * sizeof(float)}, {to, width * sizeof(float)}}, "embedding_step_permute", code))
      return code;
    std::memcpy(to, from, width * sizeof(float));
  }
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_pool(const void* pairs, const uint32_t* inverse, uint64_t n,
                                                           const float* rows, uint64_t width, float* out,
                                                           uint64_t positions, void* scratch, void* stream) {
  (void)stream;
  if ((positions > 0 && (!out || !scratch)) || (n > 0 && (!pairs || !inverse || !rows)))
    return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  uint64_t distinct = 0;
  for (uint64_t j = 0; j < n; ++j) distinct = std::max<uint64_t>(distinct, uint64_t{inverse[j]} + 1);
  if (!on_device({{pairs, n * sizeof(portable::KeyPosition)},
                  {inverse, n * sizeof(uint32_t)},
                  {rows, distinct * width * sizeof(float)},
                  {out, positions * width * sizeof(float)},
                  {scratch, scratch_bytes(n, positions)}},
                 "embedding_step_pool", code))
    return code;
  const auto* p = static_cast<const portable::KeyPosition*>(pairs);
  std::fill(out, out + positions * width, 0.0f);
  for (uint64_t j = 0; j < n; ++j) {
    if (p[j].position < 0 || static_cast<uint64_t>(p[j].position) >= positions) continue;  // not pooled
    float* o = out + static_cast<uint64_t>(p[j].position) * width;
    const float* r = rows + uint64_t{inverse[j]} * width;
    for (uint64_t c = 0; c < width; ++c) o[c] += r[c];
  }
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_unpool(const int64_t* positions, uint64_t stride,
                                                             const uint32_t* by_key, const uint32_t* key_begin,
                                                             uint64_t count, const float* grad_out, uint64_t width,
                                                             int from_zero, float* grads, void* stream) {
  (void)stream;
  if (count == 0) return EMBSCALE_CUDA_OK;
  if (!by_key || !key_begin || !grad_out || !grads || (positions && stride < 1)) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  if (!on_device({{key_begin, (count + 1) * sizeof(uint32_t)}, {grads, count * width * sizeof(float)}},
                 "embedding_step_unpool", code))
    return code;
  const uint64_t n = key_begin[count];
  if (!on_device({{positions, positions && n > 0 ? ((n - 1) * stride + 1) * sizeof(int64_t) : 0},
                  {by_key, n * sizeof(uint32_t)}},
                 "embedding_step_unpool", code))
    return code;
  for (uint64_t i = 0; i < count; ++i) {
    float* g = grads + i * width;
    for (uint32_t at = key_begin[i]; at < key_begin[i + 1]; ++at) {
      const uint64_t j = by_key[at];
      const float* o = grad_out + (positions ? static_cast<uint64_t>(positions[j * stride]) : j) * width;
      for (uint64_t c = 0; c < width; ++c) g[c] = at == key_begin[i] ? (from_zero ? 0.0f + o[c] : o[c]) : g[c] + o[c];
    }
  }
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_scale_bags(const int64_t* offsets, uint64_t bags, uint64_t dim,
                                                                 float* values, void* stream) {
  (void)stream;
  if (bags == 0) return EMBSCALE_CUDA_OK;
  if (!offsets || !values) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  if (!on_device({{offsets, (bags + 1) * sizeof(int64_t)}, {values, bags * dim * sizeof(float)}},
                 "embedding_step_scale_bags", code))
    return code;
  for (uint64_t b = 0; b < bags; ++b) {
    const float scale = portable::bag_scale(offsets[b + 1] - offsets[b]);
    for (uint64_t d = 0; d < dim; ++d) values[b * dim + d] *= scale;
  }
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_copy_segments(const uint64_t* segments, uint64_t count,
                                                                    int to_blocks, const float* from, float* to,
                                                                    void* stream) {
  (void)stream;
  if (count == 0) return EMBSCALE_CUDA_OK;
  if (!segments || !from || !to) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  if (!on_device({{segments, 3 * count * sizeof(uint64_t)}}, "embedding_step_copy_segments", code)) return code;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t* s = segments + 3 * i;
    const uint64_t src = to_blocks ? s[1] : s[0], dst = to_blocks ? s[0] : s[1];
    if (!on_device({{from + src, s[2] * sizeof(float)}, {to + dst, s[2] * sizeof(float)}},
                   "embedding_step_copy_segments", code))
      return code;
    std::memcpy(to + dst, from + src, s[2] * sizeof(float));
  }
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_regression(const float* values, const float* labels,
                                                                 uint64_t label_dim, uint64_t samples, uint64_t width,
                                                                 double inv_batch, double* sample_loss, float* grad,
                                                                 void* stream) {
  (void)stream;
  if (samples == 0) return EMBSCALE_CUDA_OK;
  if (!values || !labels || !sample_loss || !grad || label_dim < 1) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  if (!on_device({{values, samples * width * sizeof(float)},
                  {labels, samples * label_dim * sizeof(float)},
                  {sample_loss, samples * sizeof(double)},
                  {grad, samples * width * sizeof(float)}},
                 "embedding_step_regression", code))
    return code;
  for (uint64_t s = 0; s < samples; ++s)
    sample_loss[s] = portable::regression_sample(
        values + s * width, width, portable::regression_target_of(labels[s * label_dim]), inv_batch, grad + s * width);
  return EMBSCALE_CUDA_OK;
}

}  // extern "C"

#endif  // EMBSCALE_FAKE_OMIT_EMBEDDING_STEP
