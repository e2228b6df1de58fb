// The nccl family of libembscale_cuda.so (kernels/nccl.cu) on a real GPU and a real NCCL, as one
// rank (one process, one GPU: NCCL refuses two ranks on one device, and the GPU machine has one).
// Every call of the family on device buffers, for every element type it reduces, blocking on the
// stream: the bootstrap (unique id, init), each collective out of place and in place as NCCL
// defines it, a grouped send/recv to itself (the shape of NcclCommunicator's alltoallv), the
// version, destroy. One rank makes each collective's result known exactly (the input itself;
// ncclAvg divides by 1), so what is checked is that the calls reach NCCL with the right types,
// counts and buffers. lib/comm's NcclCommunicator runs over the stand-in NCCL on 1, 2 and 4 ranks
// in CI (tests/comm); on a GPU it runs in `embscale collectives --backend nccl`, which needs the
// CLI there (MPI and HDF5 carried: not yet done, so not yet run).
//
// NCCL is found as the family finds it: $EMBSCALE_NCCL_LIBRARY, else libnccl.so.2. Standalone
// (cudart and libembscale_cuda.so): exits 77 without a GPU, and without NCCL (saying so).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "device/device_abi.h"
#include "device/families/nccl.h"
#include "gpu_check.hpp"

namespace {

using DeviceBytes = embscale::gpu_check::DeviceArray<unsigned char>;

struct Type {
  int dtype;
  std::size_t bytes;
  const char* name;
};
constexpr Type kTypes[] = {{EMBSCALE_NCCL_INT8, 1, "int8"},       {EMBSCALE_NCCL_UINT8, 1, "uint8"},
                           {EMBSCALE_NCCL_INT32, 4, "int32"},     {EMBSCALE_NCCL_UINT32, 4, "uint32"},
                           {EMBSCALE_NCCL_INT64, 8, "int64"},     {EMBSCALE_NCCL_UINT64, 8, "uint64"},
                           {EMBSCALE_NCCL_FLOAT16, 2, "float16"}, {EMBSCALE_NCCL_FLOAT32, 4, "float32"},
                           {EMBSCALE_NCCL_FLOAT64, 8, "float64"}, {EMBSCALE_NCCL_BFLOAT16, 2, "bfloat16"}};

// Bytes of small non-negative integers in every element type, so that the input is a valid
// number of each (1.0-ish halves, small ints): a reduction over one rank returns it exactly.
std::vector<unsigned char> pattern(const Type& t, std::size_t count, int seed) {
  std::vector<unsigned char> out(count * t.bytes, 0);
  for (std::size_t i = 0; i < count; ++i) {
    const auto v = static_cast<unsigned>((i * 7 + static_cast<std::size_t>(seed)) % 50);
    unsigned char* at = out.data() + i * t.bytes;
    switch (t.dtype) {
      case EMBSCALE_NCCL_FLOAT16: {  // v as a half: exact for small integers
        const float f = static_cast<float>(v);
        std::uint32_t bits;
        std::memcpy(&bits, &f, 4);
        const std::uint16_t half =
            v == 0 ? 0
                   : static_cast<std::uint16_t>(((((bits >> 23) & 0xff) - 127 + 15) << 10) | ((bits >> 13) & 0x3ff));
        std::memcpy(at, &half, 2);
        break;
      }
      case EMBSCALE_NCCL_BFLOAT16: {
        const float f = static_cast<float>(v);
        std::uint32_t bits;
        std::memcpy(&bits, &f, 4);
        const auto bf = static_cast<std::uint16_t>(bits >> 16);
        std::memcpy(at, &bf, 2);
        break;
      }
      case EMBSCALE_NCCL_FLOAT32: {
        const float f = static_cast<float>(v);
        std::memcpy(at, &f, 4);
        break;
      }
      case EMBSCALE_NCCL_FLOAT64: {
        const double d = v;
        std::memcpy(at, &d, 8);
        break;
      }
      default: std::memcpy(at, &v, 1); break;  // little-endian: the low byte, the rest zero
    }
  }
  return out;
}

void check_same(const std::vector<unsigned char>& got, const std::vector<unsigned char>& want, const char* call,
                const Type& t, const char* how) {
  CHECK(got == want, "%s %s %s: the result differs from the input (1 rank)", call, t.name, how);
}

}  // namespace

int main() {
  if (embscale::gpu_check::no_gpu()) return 77;
  int version = 0;
  if (embscale_cuda_nccl_version(&version) == EMBSCALE_CUDA_UNAVAILABLE) {
    std::printf("SKIP: NCCL unavailable: %s\n", embscale_cuda_last_error_detail());
    return 77;
  }
  std::printf("NCCL %d\n", version);
  CHECK(version >= EMBSCALE_CUDA_NCCL_OLDEST, "NCCL %d is older than the family accepts", version);

  ABI_OK(embscale_cuda_set_device(0));
  void* stream = nullptr;
  ABI_OK(embscale_cuda_stream_create(&stream));
  unsigned char id[EMBSCALE_CUDA_NCCL_ID_BYTES];
  ABI_OK(embscale_cuda_nccl_unique_id(id));
  void* comm = nullptr;
  ABI_OK(embscale_cuda_nccl_comm_create(id, 1, 0, &comm));
  CHECK(embscale_cuda_nccl_comm_create(id, 1, 1, &comm) == EMBSCALE_CUDA_INVALID_ARGUMENT, "rank 1 of 1 accepted");

  constexpr std::size_t kCount = 1000;  // elements per call
  for (const Type& t : kTypes) {
    const std::size_t bytes = kCount * t.bytes;
    const auto input = pattern(t, kCount, 3);
    DeviceBytes send(bytes), recv(bytes);
    for (int op = EMBSCALE_NCCL_SUM; op <= EMBSCALE_NCCL_AVG; ++op) {
      send.upload(input);
      ABI_OK(embscale_cuda_nccl_all_reduce(send.get(), recv.get(), kCount, t.dtype, op, comm, stream));
      ABI_OK(embscale_cuda_stream_synchronize(stream));
      check_same(recv.download(), input, "all_reduce", t, "out of place");
      ABI_OK(embscale_cuda_nccl_all_reduce(send.get(), send.get(), kCount, t.dtype, op, comm, stream));
      ABI_OK(embscale_cuda_nccl_reduce(send.get(), recv.get(), kCount, t.dtype, op, 0, comm, stream));
      ABI_OK(embscale_cuda_nccl_reduce_scatter(send.get(), send.get(), kCount, t.dtype, op, comm, stream));
      ABI_OK(embscale_cuda_stream_synchronize(stream));
      check_same(send.download(), input, "all_reduce, reduce_scatter", t, "in place");
      check_same(recv.download(), input, "reduce", t, "to the root");
    }
    send.upload(input);
    ABI_OK(embscale_cuda_nccl_all_gather(send.get(), recv.get(), kCount, t.dtype, comm, stream));
    ABI_OK(embscale_cuda_nccl_broadcast(recv.get(), recv.get(), kCount, t.dtype, 0, comm, stream));
    ABI_OK(embscale_cuda_stream_synchronize(stream));
    check_same(recv.download(), input, "all_gather, broadcast", t, "");
  }

  // A grouped exchange with itself, as NcclCommunicator's alltoallv sends a pair's rows: three
  // messages of different sizes, matched in call order.
  {
    const Type& t = kTypes[1];  // bytes
    const std::size_t sizes[] = {17, 0, 4096};
    const auto input = pattern(t, 17 + 4096, 5);
    DeviceBytes send(input.size()), recv(input.size());
    send.upload(input);
    ABI_OK(embscale_cuda_nccl_group_start());
    std::size_t at = 0;
    for (const std::size_t n : sizes) {
      if (n > 0) {
        ABI_OK(embscale_cuda_nccl_send(send.get() + at, n, EMBSCALE_NCCL_UINT8, 0, comm, stream));
        ABI_OK(embscale_cuda_nccl_recv(recv.get() + at, n, EMBSCALE_NCCL_UINT8, 0, comm, stream));
      }
      at += n;
    }
    ABI_OK(embscale_cuda_nccl_group_end());
    ABI_OK(embscale_cuda_stream_synchronize(stream));
    CHECK(recv.download() == input, "grouped send/recv to itself: the rows differ");
  }

  CHECK(embscale_cuda_nccl_all_reduce(nullptr, nullptr, 1, 42, EMBSCALE_NCCL_SUM, comm, stream) ==
            EMBSCALE_CUDA_INVALID_ARGUMENT,
        "an unknown dtype reached NCCL");
  ABI_OK(embscale_cuda_nccl_comm_destroy(comm));
  ABI_OK(embscale_cuda_stream_destroy(stream));
  std::printf("nccl: %d of %d checks failed\n", embscale::gpu_check::g_failures, embscale::gpu_check::g_checks);
  return embscale::gpu_check::g_failures == 0 ? 0 : 1;
}
