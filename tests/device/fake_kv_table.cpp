/* The stand-in library's GPU table (the kv_table family of device/families/kv_table.h) on host
 * memory: the same portable code the real kernels run (kv/portable/host_batch.hpp: the stable
 * sort by bucket, then every group with a host tile), behind the family's C functions. So the
 * GPU table's host side (kv/device_executor.hpp: the copies in and out, the scratch carving, the
 * grouping and run calls, the rehash, the banks' growth, the exports) runs in CI through the
 * seam as on a GPU, and the typed conformance suite holds it to the reference model
 * (tests/kv/device_table_test.cpp). Left out with EMBSCALE_FAKE_OMIT_KV_TABLE (a library
 * without the family). */
#ifndef EMBSCALE_FAKE_OMIT_KV_TABLE

#include <cstdlib>
#include <cstring>

#include "device/families/kv_table.h"
#include "fake_device_memory.hpp"
#include "kv/portable/host_batch.hpp"

namespace portable = embscale::kv::portable;

extern "C" {

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_layout(uint64_t* arrays_bytes, uint64_t* state_bytes,
                                                       uint64_t* batch_bytes) {
  if (!arrays_bytes || !state_bytes || !batch_bytes) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  *arrays_bytes = sizeof(portable::TableArrays);
  *state_bytes = sizeof(portable::TableState);
  *batch_bytes = sizeof(portable::BatchRef);
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_group_scratch(uint64_t n, uint64_t* bytes) {
  if (!bytes) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  *bytes = 8 * (n + 1);  // unused here; some, so that the caller's carving is exercised
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_group(const uint64_t* keys, uint64_t n, uint64_t buckets,
                                                      uint32_t* order, uint32_t* offsets, uint64_t* groups,
                                                      void* scratch, uint64_t scratch_bytes, void* stream) {
  (void)stream;
  if (!offsets || !groups || (n > 0 && (!keys || !order || !scratch || scratch_bytes < 8 * (n + 1))))
    return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  if (!embscale::fake::on_device(
          {{keys, n * 8}, {order, n * 4}, {offsets, (n + 1) * 4}, {groups, 8}, {scratch, 8 * (n + 1)}},
          "kv_table_group", code))
    return code;
  const portable::BucketGroups g = portable::group_by_bucket({keys, n}, buckets);
  std::memcpy(order, g.order.data(), g.order.size() * sizeof(uint32_t));
  std::memcpy(offsets, g.offsets.data(), g.offsets.size() * sizeof(uint32_t));
  *groups = g.groups();
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_run(const void* state, const void* batch, void* stream) {
  (void)stream;
  if (!state || !batch) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  portable::BatchRef b = *static_cast<const portable::BatchRef*>(batch);
  const auto& s = *static_cast<const portable::TableState*>(state);
  if (portable::batch_problem(s, b)) return EMBSCALE_CUDA_INVALID_ARGUMENT;  // as the real library
  const uint64_t n = b.size, row_bytes = n * s.arrays.row_width * sizeof(float);
  int code = EMBSCALE_CUDA_OK;
  if (n > 0 && !embscale::fake::on_device({{b.keys, n * 8},
                                           {b.outcomes, n},
                                           {b.rows_in, b.rows_in ? row_bytes : 0},
                                           {b.rows_out, b.rows_out ? row_bytes : 0},
                                           {b.scores_in, b.scores_in ? n * 8 : 0},
                                           {b.scores_out, b.scores_out ? n * 8 : 0},
                                           {b.accumulate, b.accumulate ? n : 0}},
                                          "kv_table_run", code))
    return code;
  if (b.order && b.group_count) b.groups = *b.group_count;  // the device's count
  portable::run_batch_on_host(s, b);
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_export_scratch(uint64_t n, uint64_t* bytes) {
  if (!bytes) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  *bytes = n + 8;  // unused here; some, so that the caller's sizing is exercised
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_export(const void* arrays, uint64_t first, uint64_t end,
                                                       uint64_t min_score, uint64_t* keys, uint64_t* scores,
                                                       float* rows, uint64_t* count, void* scratch,
                                                       uint64_t scratch_bytes, void* stream) {
  (void)stream;
  if (!arrays || !count || first > end) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  if (end > first && (!keys || !scores || !rows || !scratch || scratch_bytes < end - first + 8))
    return EMBSCALE_CUDA_INVALID_ARGUMENT;
  const auto& a = *static_cast<const portable::TableArrays*>(arrays);
  const uint64_t slots = end - first;
  int code = EMBSCALE_CUDA_OK;
  if (!embscale::fake::on_device({{keys, slots * 8},
                                  {scores, slots * 8},
                                  {rows, slots * a.row_width * sizeof(float)},
                                  {count, 8},
                                  {scratch, slots + 8}},
                                 "kv_table_export", code))
    return code;
  uint64_t n = 0;
  for (uint64_t slot = first; slot < end; ++slot) {
    if (!portable::holds_key(a.keys[slot]) || a.scores[slot] < min_score) continue;
    keys[n] = a.keys[slot];
    scores[n] = a.scores[slot];
    std::memcpy(rows + n * a.row_width, portable::row_of(a, slot), a.row_width * sizeof(float));
    ++n;
  }
  *count = n;
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_host_alloc(uint64_t bytes, void** pointer) {
  if (!pointer) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  *pointer = bytes == 0 ? nullptr : std::malloc(bytes);
  return bytes == 0 || *pointer ? EMBSCALE_CUDA_OK : EMBSCALE_CUDA_CUDA_ERROR;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_host_free(void* pointer) {
  std::free(pointer);
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_rehash(const void* from, const void* to, void* stream) {
  (void)stream;
  if (!from || !to) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  portable::rehash_on_host(*static_cast<const portable::TableArrays*>(from),
                           *static_cast<const portable::TableArrays*>(to));
  return EMBSCALE_CUDA_OK;
}

}  // extern "C"

#endif  // EMBSCALE_FAKE_OMIT_KV_TABLE
