/* Kernel family "nccl" of the device seam: NCCL's communicator and collectives on device buffers
 * (kernels/nccl.cu), one call per NCCL call, so that lib/comm's NcclCommunicator composes what
 * NCCL lacks (alltoallv, gatherv, allgatherv as grouped send/recv) on the host side of the seam.
 * C only, under the rules of device/device_abi.h (codes, per-thread detail, streams as void*). A
 * change to a signature or a meaning here bumps EMBSCALE_CUDA_NCCL_VERSION, and only it.
 *
 * The library never links NCCL: it opens $EMBSCALE_NCCL_LIBRARY, else libnccl.so.2 from the
 * loader's search path, at the first call, so libembscale_cuda.so still loads on a node without
 * NCCL. Every function then returns EMBSCALE_CUDA_UNAVAILABLE with the loader's reason, and a
 * library older than EMBSCALE_CUDA_NCCL_OLDEST (lacking ncclAvg or ncclBfloat16) is refused the
 * same way.
 *
 * Semantics are NCCL's: the calls enqueue on `stream` and return; a communicator is one rank of
 * `nranks` on the current device (one rank per GPU: NCCL refuses two on one device); the calls
 * between group_start and group_end are issued together (send and recv pairs of an exchange must
 * be, or they deadlock); a pair's sends match its receives in call order (there are no tags).
 * Buffers are device pointers, either disjoint or in place as NCCL defines it (recv == send; for
 * all_gather send == recv + rank * count; for reduce_scatter recv == send + rank * recv_count).
 * Counts are elements of `dtype`. */
#ifndef EMBSCALE_DEVICE_FAMILIES_NCCL_H
#define EMBSCALE_DEVICE_FAMILIES_NCCL_H

#include <stdint.h>

#include "device/device_abi.h"

#define EMBSCALE_CUDA_NCCL_VERSION 1

/* The size of NCCL's unique id (NCCL_UNIQUE_ID_BYTES): rank 0 makes it, every rank passes it. */
#define EMBSCALE_CUDA_NCCL_ID_BYTES 128
/* The oldest NCCL accepted, as ncclGetVersion reports it (2.10.3: ncclAvg, ncclBfloat16). */
#define EMBSCALE_CUDA_NCCL_OLDEST 21003

/* Element types, with NCCL's own values (ncclDataType_t). */
enum {
  EMBSCALE_NCCL_INT8 = 0,
  EMBSCALE_NCCL_UINT8 = 1,
  EMBSCALE_NCCL_INT32 = 2,
  EMBSCALE_NCCL_UINT32 = 3,
  EMBSCALE_NCCL_INT64 = 4,
  EMBSCALE_NCCL_UINT64 = 5,
  EMBSCALE_NCCL_FLOAT16 = 6,
  EMBSCALE_NCCL_FLOAT32 = 7,
  EMBSCALE_NCCL_FLOAT64 = 8,
  EMBSCALE_NCCL_BFLOAT16 = 9
};
/* Reductions, with NCCL's own values (ncclRedOp_t). AVG divides the sum by nranks in the element
 * type. */
enum {
  EMBSCALE_NCCL_SUM = 0,
  EMBSCALE_NCCL_PROD = 1,
  EMBSCALE_NCCL_MAX = 2,
  EMBSCALE_NCCL_MIN = 3,
  EMBSCALE_NCCL_AVG = 4
};

#ifdef __cplusplus
extern "C" {
#endif

/* *version = the loaded NCCL's ncclGetVersion code (e.g. 22809 for 2.28.9). */
EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_version(int* version);
/* Fills id[0 .. EMBSCALE_CUDA_NCCL_ID_BYTES) with a new unique id (ncclGetUniqueId). */
EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_unique_id(void* id);
/* Collective over the nranks ranks passing the same id: *comm = this rank's communicator on the
 * current device (ncclCommInitRank). */
EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_comm_create(const void* id, int nranks, int rank, void** comm);
/* ncclCommDestroy after the communicator's work completed; NULL does nothing. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_comm_destroy(void* comm);
/* ncclCommAbort: frees the communicator without waiting for peers (a failing rank); NULL does
 * nothing. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_comm_abort(void* comm);
EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_group_start(void);
EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_group_end(void);
EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_send(const void* buffer, uint64_t count, int dtype, int peer, void* comm,
                                                 void* stream);
EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_recv(void* buffer, uint64_t count, int dtype, int peer, void* comm,
                                                 void* stream);
EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_all_reduce(const void* send, void* recv, uint64_t count, int dtype, int op,
                                                       void* comm, void* stream);
/* recv holds recv_count elements; send nranks * recv_count. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_reduce_scatter(const void* send, void* recv, uint64_t recv_count, int dtype,
                                                           int op, void* comm, void* stream);
/* send holds send_count elements; recv nranks * send_count. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_all_gather(const void* send, void* recv, uint64_t send_count, int dtype,
                                                       void* comm, void* stream);
/* send is read on root only, recv written everywhere. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_broadcast(const void* send, void* recv, uint64_t count, int dtype, int root,
                                                      void* comm, void* stream);
/* recv is written on root only (ignored elsewhere). */
EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_reduce(const void* send, void* recv, uint64_t count, int dtype, int op,
                                                   int root, void* comm, void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The family's functions, named without the embscale_cuda_ prefix (device/kernel_families.h). */
#define EMBSCALE_CUDA_NCCL_FUNCTIONS(X) \
  X(nccl_version)                       \
  X(nccl_unique_id)                     \
  X(nccl_comm_create)                   \
  X(nccl_comm_destroy)                  \
  X(nccl_comm_abort)                    \
  X(nccl_group_start)                   \
  X(nccl_group_end)                     \
  X(nccl_send)                          \
  X(nccl_recv)                          \
  X(nccl_all_reduce)                    \
  X(nccl_reduce_scatter)                \
  X(nccl_all_gather)                    \
  X(nccl_broadcast)                     \
  X(nccl_reduce)

#endif /* EMBSCALE_DEVICE_FAMILIES_NCCL_H */
