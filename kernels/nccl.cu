// Kernel family "nccl" (device/families/nccl.h): NCCL's calls behind the C ABI. Host code only:
// NCCL is opened at the first call with dlopen ($EMBSCALE_NCCL_LIBRARY, else libnccl.so.2), never
// linked, so libembscale_cuda.so loads on nodes without NCCL and needs no nccl.h to build. The
// declarations below are NCCL's stable C ABI (nccl.h since 2.0): its results and enums are ints,
// a communicator and a stream are pointers, the unique id a 128-byte struct passed by value.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "abi_boundary.hpp"
#include "device/families/nccl.h"

namespace embscale::cuda {
namespace {

struct NcclId {
  char internal[EMBSCALE_CUDA_NCCL_ID_BYTES];
};
using Result = int;  // ncclResult_t; 0 is ncclSuccess
using Comm = void*;  // ncclComm_t
using Stream = void*;

// The NCCL functions the family calls, resolved once.
struct Nccl {
  Result (*get_version)(int*) = nullptr;
  const char* (*error_string)(Result) = nullptr;
  Result (*get_unique_id)(NcclId*) = nullptr;
  Result (*comm_init_rank)(Comm*, int, NcclId, int) = nullptr;
  Result (*comm_destroy)(Comm) = nullptr;
  Result (*comm_abort)(Comm) = nullptr;
  Result (*group_start)() = nullptr;
  Result (*group_end)() = nullptr;
  Result (*send)(const void*, std::size_t, int, int, Comm, Stream) = nullptr;
  Result (*recv)(void*, std::size_t, int, int, Comm, Stream) = nullptr;
  Result (*all_reduce)(const void*, void*, std::size_t, int, int, Comm, Stream) = nullptr;
  Result (*reduce_scatter)(const void*, void*, std::size_t, int, int, Comm, Stream) = nullptr;
  Result (*all_gather)(const void*, void*, std::size_t, int, Comm, Stream) = nullptr;
  Result (*broadcast)(const void*, void*, std::size_t, int, int, Comm, Stream) = nullptr;
  Result (*reduce)(const void*, void*, std::size_t, int, int, int, Comm, Stream) = nullptr;
  int version = 0;
  std::string problem;  // why NCCL cannot be used; empty when it can
};

template <class F> bool resolve(void* handle, const char* symbol, F& out, std::string& problem) {
  out = reinterpret_cast<F>(dlsym(handle, symbol));
  if (out == nullptr && problem.empty()) problem = std::string("lacks ") + symbol;
  return out != nullptr;
}

Nccl open_nccl() {
  Nccl n;
  const char* variable = std::getenv("EMBSCALE_NCCL_LIBRARY");
  const std::string path = variable != nullptr && variable[0] != '\0' ? variable : "libnccl.so.2";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    n.problem = "cannot open NCCL (" + path + ", set EMBSCALE_NCCL_LIBRARY to its file): " + (why ? why : "?");
    return n;
  }
  std::string problem;
  resolve(handle, "ncclGetVersion", n.get_version, problem);
  resolve(handle, "ncclGetErrorString", n.error_string, problem);
  resolve(handle, "ncclGetUniqueId", n.get_unique_id, problem);
  resolve(handle, "ncclCommInitRank", n.comm_init_rank, problem);
  resolve(handle, "ncclCommDestroy", n.comm_destroy, problem);
  resolve(handle, "ncclCommAbort", n.comm_abort, problem);
  resolve(handle, "ncclGroupStart", n.group_start, problem);
  resolve(handle, "ncclGroupEnd", n.group_end, problem);
  resolve(handle, "ncclSend", n.send, problem);
  resolve(handle, "ncclRecv", n.recv, problem);
  resolve(handle, "ncclAllReduce", n.all_reduce, problem);
  resolve(handle, "ncclReduceScatter", n.reduce_scatter, problem);
  resolve(handle, "ncclAllGather", n.all_gather, problem);
  resolve(handle, "ncclBroadcast", n.broadcast, problem);
  resolve(handle, "ncclReduce", n.reduce, problem);
  if (!problem.empty()) {
    n.problem = path + " " + problem + " (not NCCL 2.x?)";
    return n;
  }
  if (n.get_version(&n.version) != 0 || n.version < EMBSCALE_CUDA_NCCL_OLDEST)
    n.problem = path + " is NCCL " + std::to_string(n.version) + "; embscale needs " +
                std::to_string(EMBSCALE_CUDA_NCCL_OLDEST) + " (2.10.3) or later";
  return n;
}

// NCCL, opened at the first call of any thread; null with the reason in the detail when it cannot
// be used (EMBSCALE_CUDA_UNAVAILABLE).
const Nccl* nccl(int& rc) {
  static std::once_flag once;
  static Nccl loaded;
  std::call_once(once, [] { loaded = open_nccl(); });
  if (!loaded.problem.empty()) {
    rc = fail(EMBSCALE_CUDA_UNAVAILABLE, loaded.problem);
    return nullptr;
  }
  rc = EMBSCALE_CUDA_OK;
  return &loaded;
}

// EMBSCALE_CUDA_OK, or NCCL's failure as a CUDA error naming the call.
int checked(const Nccl& n, Result result, const char* what) {
  if (result == 0) return EMBSCALE_CUDA_OK;
  return fail(EMBSCALE_CUDA_CUDA_ERROR, std::string(what) + ": " + n.error_string(result));
}

// Runs `call` with NCCL loaded: `call(const Nccl&)` returns NCCL's result for `what`.
template <class Call> int with_nccl(const char* what, Call call) {
  return guarded([&] {
    int rc = EMBSCALE_CUDA_OK;
    const Nccl* n = nccl(rc);
    if (n == nullptr) return rc;
    return checked(*n, call(*n), what);
  });
}

bool valid_dtype(int dtype) { return dtype >= EMBSCALE_NCCL_INT8 && dtype <= EMBSCALE_NCCL_BFLOAT16; }
bool valid_op(int op) { return op >= EMBSCALE_NCCL_SUM && op <= EMBSCALE_NCCL_AVG; }

}  // namespace
}  // namespace embscale::cuda

using embscale::cuda::fail;
using embscale::cuda::guarded;
using embscale::cuda::Nccl;
using embscale::cuda::NcclId;
using embscale::cuda::valid_dtype;
using embscale::cuda::valid_op;
using embscale::cuda::with_nccl;

extern "C" {

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_version(int* version) {
  if (version == nullptr) return guarded([] { return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "version is NULL"); });
  return with_nccl("ncclGetVersion", [&](const Nccl& n) { return n.get_version(version); });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_unique_id(void* id) {
  if (id == nullptr) return guarded([] { return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "id is NULL"); });
  return with_nccl("ncclGetUniqueId", [&](const Nccl& n) { return n.get_unique_id(static_cast<NcclId*>(id)); });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_comm_create(const void* id, int nranks, int rank, void** comm) {
  if (id == nullptr || comm == nullptr || nranks < 1 || rank < 0 || rank >= nranks)
    return guarded(
        [] { return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "id or comm is NULL, or rank is outside [0, nranks)"); });
  NcclId copy;
  std::memcpy(&copy, id, sizeof copy);
  return with_nccl("ncclCommInitRank", [&](const Nccl& n) { return n.comm_init_rank(comm, nranks, copy, rank); });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_comm_destroy(void* comm) {
  if (comm == nullptr) return EMBSCALE_CUDA_OK;
  return with_nccl("ncclCommDestroy", [&](const Nccl& n) { return n.comm_destroy(comm); });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_comm_abort(void* comm) {
  if (comm == nullptr) return EMBSCALE_CUDA_OK;
  return with_nccl("ncclCommAbort", [&](const Nccl& n) { return n.comm_abort(comm); });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_group_start(void) {
  return with_nccl("ncclGroupStart", [](const Nccl& n) { return n.group_start(); });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_group_end(void) {
  return with_nccl("ncclGroupEnd", [](const Nccl& n) { return n.group_end(); });
}

#define EMBSCALE_NCCL_CHECK_ARGS(condition, text) \
  if (!(condition)) return guarded([] { return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, text); })

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_send(const void* buffer, uint64_t count, int dtype, int peer, void* comm,
                                                 void* stream) {
  EMBSCALE_NCCL_CHECK_ARGS(valid_dtype(dtype) && comm != nullptr, "bad dtype, or comm is NULL");
  return with_nccl("ncclSend", [&](const Nccl& n) { return n.send(buffer, count, dtype, peer, comm, stream); });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_recv(void* buffer, uint64_t count, int dtype, int peer, void* comm,
                                                 void* stream) {
  EMBSCALE_NCCL_CHECK_ARGS(valid_dtype(dtype) && comm != nullptr, "bad dtype, or comm is NULL");
  return with_nccl("ncclRecv", [&](const Nccl& n) { return n.recv(buffer, count, dtype, peer, comm, stream); });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_all_reduce(const void* send, void* recv, uint64_t count, int dtype, int op,
                                                       void* comm, void* stream) {
  EMBSCALE_NCCL_CHECK_ARGS(valid_dtype(dtype) && valid_op(op) && comm != nullptr, "bad dtype or op, or comm is NULL");
  return with_nccl("ncclAllReduce",
                   [&](const Nccl& n) { return n.all_reduce(send, recv, count, dtype, op, comm, stream); });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_reduce_scatter(const void* send, void* recv, uint64_t recv_count, int dtype,
                                                           int op, void* comm, void* stream) {
  EMBSCALE_NCCL_CHECK_ARGS(valid_dtype(dtype) && valid_op(op) && comm != nullptr, "bad dtype or op, or comm is NULL");
  return with_nccl("ncclReduceScatter",
                   [&](const Nccl& n) { return n.reduce_scatter(send, recv, recv_count, dtype, op, comm, stream); });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_all_gather(const void* send, void* recv, uint64_t send_count, int dtype,
                                                       void* comm, void* stream) {
  EMBSCALE_NCCL_CHECK_ARGS(valid_dtype(dtype) && comm != nullptr, "bad dtype, or comm is NULL");
  return with_nccl("ncclAllGather",
                   [&](const Nccl& n) { return n.all_gather(send, recv, send_count, dtype, comm, stream); });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_broadcast(const void* send, void* recv, uint64_t count, int dtype, int root,
                                                      void* comm, void* stream) {
  EMBSCALE_NCCL_CHECK_ARGS(valid_dtype(dtype) && comm != nullptr, "bad dtype, or comm is NULL");
  return with_nccl("ncclBroadcast",
                   [&](const Nccl& n) { return n.broadcast(send, recv, count, dtype, root, comm, stream); });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_reduce(const void* send, void* recv, uint64_t count, int dtype, int op,
                                                   int root, void* comm, void* stream) {
  EMBSCALE_NCCL_CHECK_ARGS(valid_dtype(dtype) && valid_op(op) && comm != nullptr, "bad dtype or op, or comm is NULL");
  return with_nccl("ncclReduce",
                   [&](const Nccl& n) { return n.reduce(send, recv, count, dtype, op, root, comm, stream); });
}

#undef EMBSCALE_NCCL_CHECK_ARGS

}  // extern "C"
