// ExecutionContext: where a batched call runs and where the buffers it is handed live. Every
// storage seam takes one: the KV tables (kv/kv_table.hpp), the embedding layers' row stores
// (embedding/row_store.hpp) and the step's phase clock (core/phase_clock.hpp). The seam is drawn
// at the phase level: one call handles a whole batch (a lookup, an update, a pool), so a context
// is consulted once per call and never per key.
//
// The default is the host: buffers in host memory, host threads, no stream. A host
// implementation reads nothing but `threads` and `min_keys_for_threads`, so the context costs a
// host run nothing. A device implementation (a GPU table, CUDA-event timing) reads `memory`,
// `device` and `stream`; an implementation handed a context it cannot serve refuses it with
// embscale::Error at the moment it is set, never silently at the first call.
#pragma once

#include <cstdint>
#include <string_view>

namespace embscale {

// Where the spans a call is handed point.
enum class MemorySpace : std::uint8_t {
  kHost,    // host memory (pageable or pinned)
  kDevice,  // one GPU's memory (ExecutionContext::device); the call reads and writes it there
};

constexpr std::string_view memory_space_name(MemorySpace space) noexcept {
  return space == MemorySpace::kHost ? "host" : "device";
}

struct ExecutionContext {
  // Host: a call runs its keys on up to `threads` threads; batches below min_keys_for_threads
  // keys run on the caller's thread (a parallel region costs a few microseconds).
  int threads = 1;
  std::int64_t min_keys_for_threads = 4096;
  // Device: the memory the call's spans live in, the GPU, and the stream its work is queued on,
  // as the device seam passes streams (an opaque embscale_cuda_stream; null: the default
  // stream). A device call is asynchronous on its stream unless its contract says otherwise.
  MemorySpace memory = MemorySpace::kHost;
  int device = 0;
  void* stream = nullptr;

  bool on_host() const noexcept { return memory == MemorySpace::kHost; }

  static ExecutionContext host(int threads = 1, std::int64_t min_keys_for_threads = 4096) noexcept {
    return ExecutionContext{threads, min_keys_for_threads};
  }
  static ExecutionContext for_device(int device, void* stream) noexcept {
    ExecutionContext context;
    context.memory = MemorySpace::kDevice;
    context.device = device;
    context.stream = stream;
    return context;
  }
};

}  // namespace embscale
