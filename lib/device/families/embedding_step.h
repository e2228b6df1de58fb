/* Kernel family "embedding_step" of the device seam: the batch operations of a pooled embedding
 * step on the device (kernels/embedding_step.cu): route each key occurrence to its owner with its
 * bag's place there, de-duplicate the pairs an owner received, pool their rows into the owner's
 * buffer, sum the gradients of each distinct key back, the mean's scaling of bags, and the
 * stand-in regression's loss. The per-key and per-bag rules are lib/embedding/portable's
 * (step_ref.hpp), taken by address as plain data. C only, under the rules of device/device_abi.h.
 * A change to a signature or a meaning bumps EMBSCALE_CUDA_EMBEDDING_STEP_VERSION, and only it.
 *
 * Orders, which make a device step give the host's bits: a pooled row is summed in pair order
 * from +0, a distinct key's gradient in pair order from its first pair, exactly as the host's
 * pool_pairs and unpool_pairs (embedding/pooling.hpp) do.
 *
 * Every pointer is device memory but `owner` and `placement` (host pointers to the refs, copied
 * at the call; the arrays they point at are device memory). Every call is asynchronous on
 * `stream`. `scratch` is device memory of at least embedding_step_scratch's bytes for the call's
 * n and positions; calls on one stream may share it. */
#ifndef EMBSCALE_DEVICE_FAMILIES_EMBEDDING_STEP_H
#define EMBSCALE_DEVICE_FAMILIES_EMBEDDING_STEP_H

#include <stdint.h>

#include "device/device_abi.h"

#define EMBSCALE_CUDA_EMBEDDING_STEP_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* sizeof(portable::OwnerRef), sizeof(portable::PlacementRef) and sizeof(portable::KeyPosition) as
 * the library was built: the caller checks them against its own before any call. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_layout(uint64_t* owner_bytes, uint64_t* placement_bytes,
                                                             uint64_t* pair_bytes);

/* The scratch bytes of a call on up to `n` keys or pairs and `positions` owner-buffer rows. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_scratch(uint64_t n, uint64_t positions, uint64_t* bytes);

/* Routing of a batch of `bags` bags (`slots` per sample; bag b is sample b / slots, slot
 * b % slots; its keys are keys[offsets[b], offsets[b + 1]), n keys in all) to `ranks` owners.
 * Each occurrence goes to portable::owner_of(*owner, key, slot) or, with `every_rank`, to every
 * rank; its pair is (key, portable::position_of(*placement, dest, sample, slot)). pairs receives
 * them grouped by destination in rank order, each group in occurrence order (n pairs, n x ranks
 * with every_rank); counts[r] the size of group r. An occurrence whose owner falls outside
 * [0, ranks) (a key outside the rule's slots) is left out and counted nowhere: the caller compares
 * the counts' sum with n. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_route(const void* owner, const void* placement, int every_rank,
                                                            int32_t ranks, const int64_t* keys, uint64_t n,
                                                            const int64_t* offsets, uint64_t bags, int32_t slots,
                                                            void* pairs, uint64_t* counts, void* scratch, void* stream);

/* De-duplication of `n` keys, key j at keys[j x stride] (stride 1: a key array; 2: the keys of
 * KeyPosition pairs): distinct[0, *count) the distinct keys (ascending), inverse[j] the index in
 * distinct of key j, and the grouping the unpool reads: by_key lists the keys j of distinct key i
 * at [key_begin[i], key_begin[i + 1]) in order (key_begin holds n + 1 entries; *count + 1 are
 * written). */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_unique(const int64_t* keys, uint64_t stride, uint64_t n,
                                                             int64_t* distinct, uint64_t* count, uint32_t* inverse,
                                                             uint32_t* by_key, uint32_t* key_begin, void* scratch,
                                                             void* stream);

/* `n` distinct keys grouped by owner (portable::owner_of(*owner, key, 0), stable): grouped[p] is
 * keys[order[p]], owner r's keys first at the sum of counts[0, r); counts[r] their number. A key
 * whose owner falls outside [0, ranks) comes last and is counted nowhere (as in route). */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_group(const void* owner, int32_t ranks, const int64_t* keys,
                                                            uint64_t n, int64_t* grouped, uint32_t* order,
                                                            uint64_t* counts, void* scratch, void* stream);

/* Rows of `width` floats moved by an index: with scatter 0, out[p, :] = in[index[p], :] (a
 * gather); with scatter 1, out[index[p], :] = in[p, :] (index a permutation), for p in [0, n). */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_permute(const float* in, const uint32_t* index, uint64_t n,
                                                              uint64_t width, int scatter, float* out, void* stream);

/* Owner-side pooling: out[p, :] (p in [0, positions), `width` floats each) = the sum, in pair order
 * from +0, of rows[inverse[j], :] over the pairs j with position p; 0 for a position of no pair.
 * A pair whose position falls outside [0, positions) is not pooled. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_pool(const void* pairs, const uint32_t* inverse, uint64_t n,
                                                           const float* rows, uint64_t width, float* out,
                                                           uint64_t positions, void* scratch, void* stream);

/* Its backward: grads[i, :] = the sum, in order, of grad_out[position of j, :] over the keys j of
 * distinct key i (by_key and key_begin: unique's grouping), for i in [0, count); j's position is
 * positions[j x stride] (the positions of KeyPosition pairs: stride 2), or j itself when
 * positions is NULL. from_zero 0 starts each sum from its first term (pool_pairs' backward, the
 * owners' unpool_pairs), 1 from +0 (the requesters' unpool_bags). */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_unpool(const int64_t* positions, uint64_t stride,
                                                             const uint32_t* by_key, const uint32_t* key_begin,
                                                             uint64_t count, const float* grad_out, uint64_t width,
                                                             int from_zero, float* grads, void* stream);

/* The mean combiner: values[b, :] (dim floats) times portable::bag_scale(size of bag b). */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_scale_bags(const int64_t* offsets, uint64_t bags, uint64_t dim,
                                                                 float* values, void* stream);

/* Copies between a pooled output ([bag][dim]) and the requester blocks of the all-to-all outputs:
 * segment i is segments[3i .. 3i + 2] = {offset in the blocks, offset in the pooled output,
 * floats}. With to_blocks 0, `from` is the blocks and `to` the pooled output (unpack), else the
 * reverse (pack). The segments' destinations do not overlap. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_copy_segments(const uint64_t* segments, uint64_t count,
                                                                    int to_blocks, const float* from, float* to,
                                                                    void* stream);

/* The stand-in regression of `samples` samples of `width` values each: sample_loss[s] and
 * grad[s, :] from portable::regression_sample, the target from labels[s x label_dim]. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_regression(const float* values, const float* labels,
                                                                 uint64_t label_dim, uint64_t samples, uint64_t width,
                                                                 double inv_batch, double* sample_loss, float* grad,
                                                                 void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The family's functions, named without the embscale_cuda_ prefix (device/kernel_families.h). */
#define EMBSCALE_CUDA_EMBEDDING_STEP_FUNCTIONS(X) \
  X(embedding_step_layout)                        \
  X(embedding_step_scratch)                       \
  X(embedding_step_route)                         \
  X(embedding_step_unique)                        \
  X(embedding_step_group)                         \
  X(embedding_step_permute)                       \
  X(embedding_step_pool)                          \
  X(embedding_step_unpool)                        \
  X(embedding_step_scale_bags)                    \
  X(embedding_step_copy_segments)                 \
  X(embedding_step_regression)

#endif /* EMBSCALE_DEVICE_FAMILIES_EMBEDDING_STEP_H */
