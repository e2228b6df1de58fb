/* The stand-in library's NCCL (the nccl family of device/families/nccl.h): real ranks, each its
 * own process, exchanging through POSIX shared memory, so that lib/comm's NcclCommunicator (its
 * bootstrap over MPI, its grouped send/recv compositions, its in-place and overlap rules, its
 * traffic counts) runs in CI on 1, 2 and 4 ranks as it would over NCCL. "Device" buffers are the
 * stand-in's host memory. Left out with EMBSCALE_FAKE_OMIT_NCCL (a library without the family).
 *
 * Design: a communicator is one shared segment, named in its unique id, holding one mailbox per
 * ordered pair of ranks (a single-producer, single-consumer slot of kChunk bytes with a full flag).
 * Every call decomposes into point-to-point transfers (a collective: its sends and receives, then
 * a local step that reduces or places what arrived); calls between group_start and group_end are
 * queued and run together at group_end, as NCCL issues them; a lone call is a group of one. The
 * transfers of a group progress together (never blocking on one), so any set of matching calls
 * completes, and a pair's messages arrive in the order they were issued, as NCCL's do.
 *
 * It checks what NCCL requires and would otherwise corrupt or hang on: buffers disjoint or in place
 * as NCCL defines it; a receive the size of its send (a mismatch fails both sides); a collective's
 * transfers never matched with point-to-point ones; and a send completes only once its receiver
 * took it (NCCL's send blocks the stream until the matching receive), so calls that would deadlock
 * on NCCL time out here. With $EMBSCALE_FAKE_STRICT_DEVICE_MEMORY=1 every buffer must lie in the
 * stand-in's "device" memory (embscale_cuda_malloc), as NCCL faults on host memory. Reductions run
 * in rank order on every rank (so every rank holds the same bits); half and bfloat16 are reduced in
 * float and rounded back at each step; an average is NCCL's: floating-point inputs multiplied by
 * 1/nranks, then summed; integers summed, then divided. A peer that makes no progress for
 * $EMBSCALE_FAKE_NCCL_TIMEOUT seconds (default 60) fails the call instead of hanging CI.
 *
 * What it cannot show: calls complete on the host at the call (or at group_end), so a stream's
 * asynchrony and events never pending are not exercised. */
#ifndef EMBSCALE_FAKE_OMIT_NCCL

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "core/half_float.hpp"
#include "device/families/nccl.h"

extern "C" int embscale_fake_fail(int code, const char* text);
extern "C" void embscale_fake_clear_detail(void);
extern "C" int embscale_fake_strict_device_memory(const void* p, std::uint64_t bytes);

namespace {

using embscale::BFloat16;
using embscale::Half;

constexpr std::size_t kChunk = 64 * 1024;

// Mailbox states.
constexpr std::uint32_t kEmpty = 0;     // the sender may write
constexpr std::uint32_t kFull = 1;      // data holds a chunk the receiver has not taken
constexpr std::uint32_t kRejected = 2;  // the receiver refused the message (its size or kind): both fail

struct Mailbox {
  std::atomic<std::uint32_t> state;
  std::uint32_t last;        // the chunk ends its message
  std::uint32_t collective;  // 1: part of a collective, 0: point-to-point (they must not match)
  std::uint64_t bytes;
  unsigned char data[kChunk];
};
static_assert(std::atomic<std::uint32_t>::is_always_lock_free, "shared-memory flags must be lock-free");

// The segment: this header, then nranks * nranks mailboxes, [from * nranks + to].
struct SegmentHeader {
  std::atomic<std::int32_t> arrived;  // ranks that have mapped it
};
constexpr std::size_t kHeaderBytes =
    (sizeof(SegmentHeader) + alignof(Mailbox) - 1) / alignof(Mailbox) * alignof(Mailbox);

struct FakeComm {
  unsigned char* segment = nullptr;
  std::size_t bytes = 0;
  int nranks = 0;
  int rank = 0;
  SegmentHeader& header() const { return *reinterpret_cast<SegmentHeader*>(segment); }
  Mailbox& box(int from, int to) const {
    return reinterpret_cast<Mailbox*>(segment + kHeaderBytes)[from * nranks + to];
  }
};

std::size_t segment_bytes(int nranks) {
  return kHeaderBytes + static_cast<std::size_t>(nranks) * static_cast<std::size_t>(nranks) * sizeof(Mailbox);
}

double timeout_seconds() {
  const char* text = std::getenv("EMBSCALE_FAKE_NCCL_TIMEOUT");
  return text != nullptr && text[0] != '\0' ? std::atof(text) : 60.0;
}

int fail(int code, const std::string& text) { return embscale_fake_fail(code, ("fake NCCL: " + text).c_str()); }

// One queued point-to-point transfer. A send is finished once the receiver took its last chunk.
struct Transfer {
  const FakeComm* comm;
  bool send;
  int peer;
  unsigned char* buffer;
  std::uint64_t bytes;
  std::uint32_t collective;
  std::uint64_t done = 0;
  bool taken = false;  // a send's last chunk taken by the receiver
  bool finished() const { return done == bytes && (!send || taken || bytes == 0); }
};

// What the calling thread has queued: transfers, then the local steps of its collectives (run in
// order once every transfer is done).
struct Group {
  int depth = 0;
  std::vector<Transfer> transfers;
  std::vector<std::function<void()>> finishes;
  std::vector<std::vector<unsigned char>> scratch;  // what the collectives receive into
};
thread_local Group group;

// Moves what it can of `t`: one chunk into an empty mailbox, or one out of a full one.
// -1 on a size mismatch (the detail says which), 1 when it moved something, else 0.
int progress(Transfer& t) {
  const FakeComm& c = *t.comm;
  Mailbox& box = t.send ? c.box(c.rank, t.peer) : c.box(t.peer, c.rank);
  const std::uint32_t state = box.state.load(std::memory_order_acquire);
  if (t.send) {
    if (state == kRejected) {
      fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "rank " + std::to_string(t.peer) + " refused what rank " +
                                               std::to_string(c.rank) + " sent it (another size or kind of call)");
      return -1;
    }
    if (state != kEmpty) return 0;
    if (t.done == t.bytes) {  // the last chunk was taken
      t.taken = true;
      return 1;
    }
    const std::uint64_t n = std::min<std::uint64_t>(kChunk, t.bytes - t.done);
    std::memcpy(box.data, t.buffer + t.done, n);
    box.bytes = n;
    t.done += n;
    box.last = t.done == t.bytes ? 1 : 0;
    box.collective = t.collective;
    box.state.store(kFull, std::memory_order_release);
    return 1;
  }
  if (state != kFull) return 0;
  const std::uint64_t n = box.bytes;
  const bool wrong_size = n > t.bytes - t.done || (box.last != 0 && t.done + n != t.bytes);
  if (wrong_size || box.collective != t.collective) {
    box.state.store(kRejected, std::memory_order_release);
    fail(EMBSCALE_CUDA_INVALID_ARGUMENT,
         "rank " + std::to_string(c.rank) + " receives " + std::to_string(t.bytes) + " bytes from rank " +
             std::to_string(t.peer) + (t.collective ? " in a collective" : " point to point") + ", which sent " +
             (wrong_size ? "a message of another size (NCCL needs equal counts)"
                         : (box.collective ? "part of a collective" : "a point-to-point message")));
    return -1;
  }
  std::memcpy(t.buffer + t.done, box.data, n);
  t.done += n;
  box.state.store(kEmpty, std::memory_order_release);
  return 1;
}

// Runs the queued transfers to completion, then the collectives' local steps. Each pass moves the
// first unfinished transfer of every (direction, peer, communicator), so a pair's messages keep
// their order.
int run_group() {
  Group queued;
  std::swap(queued, group);
  const auto patience = std::chrono::duration<double>(timeout_seconds());
  auto deadline = std::chrono::steady_clock::now() + patience;  // moved on by every progress
  for (;;) {
    bool pending = false, moved = false;
    std::vector<std::tuple<const FakeComm*, bool, int>> started;  // (comm, direction, peer) seen this pass
    for (auto& t : queued.transfers) {
      if (t.finished()) continue;
      pending = true;
      const auto key = std::make_tuple(t.comm, t.send, t.peer);
      if (std::find(started.begin(), started.end(), key) != started.end()) continue;
      started.push_back(key);
      const int rc = progress(t);
      if (rc < 0) return EMBSCALE_CUDA_INVALID_ARGUMENT;
      moved = moved || rc > 0;
    }
    if (!pending) break;
    if (moved) {
      deadline = std::chrono::steady_clock::now() + patience;
    } else {
      if (std::chrono::steady_clock::now() > deadline)
        return fail(EMBSCALE_CUDA_CUDA_ERROR, "no progress for " + std::to_string(timeout_seconds()) +
                                                  " s: a peer did not make the matching call (NCCL would hang)");
      sched_yield();
    }
  }
  for (auto& finish : queued.finishes) finish();
  return EMBSCALE_CUDA_OK;
}

// A lone call runs at once; inside a group it waits for group_end.
int issued() { return group.depth > 0 ? EMBSCALE_CUDA_OK : run_group(); }

std::size_t element_bytes(int dtype) {
  switch (dtype) {
    case EMBSCALE_NCCL_INT8:
    case EMBSCALE_NCCL_UINT8: return 1;
    case EMBSCALE_NCCL_FLOAT16:
    case EMBSCALE_NCCL_BFLOAT16: return 2;
    case EMBSCALE_NCCL_INT32:
    case EMBSCALE_NCCL_UINT32:
    case EMBSCALE_NCCL_FLOAT32: return 4;
    default: return 8;
  }
}

bool valid(int dtype) { return dtype >= EMBSCALE_NCCL_INT8 && dtype <= EMBSCALE_NCCL_BFLOAT16; }

template <class T> float widen(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return embscale::to_float(v);
  else return static_cast<float>(v);
}
template <class T> T narrow(float v) {
  if constexpr (std::is_same_v<T, Half>) return embscale::to_half(v);
  else return embscale::to_bfloat16(v);
}

// acc = acc (op) x, element by element, in T (half and bfloat16 in float, rounded back).
template <class T> void combine(T* acc, const T* x, std::size_t n, int op) {
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      const float a = widen(acc[i]), b = widen(x[i]);
      acc[i] = narrow<T>(op == EMBSCALE_NCCL_PROD  ? a * b
                         : op == EMBSCALE_NCCL_MAX ? (a < b ? b : a)
                         : op == EMBSCALE_NCCL_MIN ? (b < a ? b : a)
                                                   : a + b);
    } else {
      const T a = acc[i], b = x[i];
      acc[i] = op == EMBSCALE_NCCL_PROD  ? static_cast<T>(a * b)
               : op == EMBSCALE_NCCL_MAX ? (a < b ? b : a)
               : op == EMBSCALE_NCCL_MIN ? (b < a ? b : a)
                                         : static_cast<T>(a + b);
    }
  }
}

// NCCL's average of integers: the sum divided, truncated.
template <class T> void divide(T* acc, std::size_t n, int ranks) {
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_signed_v<T>) acc[i] = static_cast<T>(static_cast<std::int64_t>(acc[i]) / ranks);
    else acc[i] = static_cast<T>(static_cast<std::uint64_t>(acc[i]) / static_cast<std::uint64_t>(ranks));
  }
}

// NCCL's average of floating-point values: each input multiplied by 1/nranks, then summed.
template <class T> void premultiply(T* values, std::size_t n, int ranks) {
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      values[i] = narrow<T>(widen(values[i]) * (1.0f / static_cast<float>(ranks)));
    else values[i] = values[i] * (T{1} / static_cast<T>(ranks));
  }
}

template <class F> void with_type(int dtype, F&& f) {
  switch (dtype) {
    case EMBSCALE_NCCL_INT8: f(std::int8_t{}); break;
    case EMBSCALE_NCCL_UINT8: f(std::uint8_t{}); break;
    case EMBSCALE_NCCL_INT32: f(std::int32_t{}); break;
    case EMBSCALE_NCCL_UINT32: f(std::uint32_t{}); break;
    case EMBSCALE_NCCL_INT64: f(std::int64_t{}); break;
    case EMBSCALE_NCCL_UINT64: f(std::uint64_t{}); break;
    case EMBSCALE_NCCL_FLOAT16: f(Half{}); break;
    case EMBSCALE_NCCL_FLOAT32: f(float{}); break;
    case EMBSCALE_NCCL_FLOAT64: f(double{}); break;
    default: f(BFloat16{}); break;
  }
}

// out = parts[0] (op) parts[1] ... (op) parts[ranks - 1], each `count` elements, in rank order
// (the parts are scratch: an average premultiplies them in place).
void reduce_parts(unsigned char* parts, unsigned char* out, std::size_t count, int dtype, int op, int ranks) {
  with_type(dtype, [&](auto zero) {
    using T = decltype(zero);
    const auto part = [&](int r) {
      return reinterpret_cast<T*>(parts + static_cast<std::size_t>(r) * count * sizeof(T));
    };
    constexpr bool integral = std::is_integral_v<T>;
    if constexpr (!integral)
      if (op == EMBSCALE_NCCL_AVG)
        for (int r = 0; r < ranks; ++r) premultiply(part(r), count, ranks);
    std::vector<T> acc(part(0), part(0) + count);
    for (int r = 1; r < ranks; ++r) combine(acc.data(), part(r), count, op);
    if constexpr (integral)
      if (op == EMBSCALE_NCCL_AVG) divide(acc.data(), count, ranks);
    std::memcpy(out, acc.data(), count * sizeof(T));
  });
}

bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
}

// With $EMBSCALE_FAKE_STRICT_DEVICE_MEMORY=1: `bytes` at `buffer` must be "device" memory.
int device_memory(const void* buffer, std::uint64_t bytes, const char* call) {
  if (embscale_fake_strict_device_memory(buffer, bytes)) return EMBSCALE_CUDA_OK;
  return fail(EMBSCALE_CUDA_INVALID_ARGUMENT,
              std::string(call) + ": a buffer in host memory (NCCL reads and writes device memory only)");
}

// NCCL's buffer rule: the call is `in_place` as NCCL defines it for the call, or its buffers share
// no byte.
int check_buffers(const void* send, std::size_t send_bytes, const void* recv, std::size_t recv_bytes, bool in_place,
                  const char* call) {
  if (const int rc = device_memory(send, send_bytes, call); rc != EMBSCALE_CUDA_OK) return rc;
  if (const int rc = device_memory(recv, recv_bytes, call); rc != EMBSCALE_CUDA_OK) return rc;
  if (in_place || !overlap(send, send_bytes, recv, recv_bytes)) return EMBSCALE_CUDA_OK;
  return fail(EMBSCALE_CUDA_INVALID_ARGUMENT,
              std::string(call) +
                  ": the buffers overlap without being in place (NCCL takes them disjoint, or in place "
                  "as it defines it)");
}

// A transfer of a point-to-point call (collective = 0) or of a collective's (1).
void queue(const FakeComm* comm, bool send, int peer, const void* buffer, std::uint64_t bytes,
           std::uint32_t collective = 1) {
  group.transfers.push_back(
      {comm, send, peer, static_cast<unsigned char*>(const_cast<void*>(buffer)), bytes, collective});
}

// Every rank's `bytes` from `send` into a scratch of nranks parts (its own copied), `then` run on
// it at the end of the group. The send buffer is read when the group runs, as NCCL reads it.
void gather_everyone(const FakeComm* c, const void* send, std::size_t bytes, std::function<void(unsigned char*)> then) {
  auto& parts = group.scratch.emplace_back(bytes * static_cast<std::size_t>(c->nranks));
  unsigned char* base = parts.data();
  for (int r = 0; r < c->nranks; ++r) {
    if (r == c->rank) continue;
    queue(c, true, r, send, bytes);
    queue(c, false, r, base + static_cast<std::size_t>(r) * bytes, bytes);
  }
  const std::size_t mine = static_cast<std::size_t>(c->rank) * bytes;
  // Its own part is taken now, before a later call of the group could change the buffer.
  if (bytes > 0) std::memcpy(base + mine, send, bytes);
  group.finishes.push_back([base, then = std::move(then)] { then(base); });
}

const FakeComm* as_comm(void* comm) { return static_cast<const FakeComm*>(comm); }

}  // namespace

extern "C" {

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_version(int* version) {
  embscale_fake_clear_detail();
  if (version == nullptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "version is NULL");
  *version = 21099;  // no NCCL has it: a test can tell where it came from
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_unique_id(void* id) {
  embscale_fake_clear_detail();
  if (id == nullptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "id is NULL");
  static std::atomic<int> made{0};
  std::memset(id, 0, EMBSCALE_CUDA_NCCL_ID_BYTES);
  // The pid, a count and the clock: a segment a crashed run left (never unlinked) is never reused.
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  std::snprintf(static_cast<char*>(id), EMBSCALE_CUDA_NCCL_ID_BYTES, "/embscale-fake-nccl-%d-%d-%lld",
                static_cast<int>(getpid()), made.fetch_add(1), static_cast<long long>(now));
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_comm_create(const void* id, int nranks, int rank, void** comm) {
  embscale_fake_clear_detail();
  if (id == nullptr || comm == nullptr || nranks < 1 || rank < 0 || rank >= nranks)
    return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "id or comm is NULL, or rank is outside [0, nranks)");
  char name[EMBSCALE_CUDA_NCCL_ID_BYTES];
  std::memcpy(name, id, sizeof name);
  name[sizeof name - 1] = '\0';
  const std::size_t bytes = segment_bytes(nranks);
  const int fd = shm_open(name, O_CREAT | O_RDWR, 0600);  // the first rank creates it, zeroed
  if (fd < 0) return fail(EMBSCALE_CUDA_CUDA_ERROR, std::string("shm_open ") + name + ": " + std::strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    close(fd);
    return fail(EMBSCALE_CUDA_CUDA_ERROR, std::string("ftruncate ") + name + ": " + std::strerror(errno));
  }
  void* mapped = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (mapped == MAP_FAILED) return fail(EMBSCALE_CUDA_CUDA_ERROR, std::string("mmap: ") + std::strerror(errno));
  auto* c = new FakeComm{static_cast<unsigned char*>(mapped), bytes, nranks, rank};
  c->header().arrived.fetch_add(1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds());
  while (c->header().arrived.load() < nranks) {
    if (std::chrono::steady_clock::now() > deadline) {
      munmap(mapped, bytes);
      delete c;
      shm_unlink(name);
      return fail(EMBSCALE_CUDA_CUDA_ERROR, "ncclCommInitRank: a peer did not arrive");
    }
    sched_yield();
  }
  if (rank == 0) shm_unlink(name);  // every rank has it mapped; nothing is left behind
  *comm = c;
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_comm_destroy(void* comm) {
  embscale_fake_clear_detail();
  if (comm == nullptr) return EMBSCALE_CUDA_OK;
  auto* c = static_cast<FakeComm*>(comm);
  munmap(c->segment, c->bytes);
  delete c;
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_comm_abort(void* comm) { return embscale_cuda_nccl_comm_destroy(comm); }

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_group_start(void) {
  embscale_fake_clear_detail();
  ++group.depth;
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_group_end(void) {
  embscale_fake_clear_detail();
  if (group.depth == 0) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "ncclGroupEnd without ncclGroupStart");
  return --group.depth > 0 ? EMBSCALE_CUDA_OK : run_group();
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_send(const void* buffer, uint64_t count, int dtype, int peer, void* comm,
                                                 void* stream) {
  (void)stream;
  embscale_fake_clear_detail();
  if (!valid(dtype) || comm == nullptr || peer < 0 || peer >= as_comm(comm)->nranks)
    return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "ncclSend: bad dtype or peer, or comm is NULL");
  const std::uint64_t bytes = count * element_bytes(dtype);
  if (const int rc = device_memory(buffer, bytes, "ncclSend"); rc != EMBSCALE_CUDA_OK) return rc;
  queue(as_comm(comm), true, peer, buffer, bytes, 0);
  return issued();
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_recv(void* buffer, uint64_t count, int dtype, int peer, void* comm,
                                                 void* stream) {
  (void)stream;
  embscale_fake_clear_detail();
  if (!valid(dtype) || comm == nullptr || peer < 0 || peer >= as_comm(comm)->nranks)
    return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "ncclRecv: bad dtype or peer, or comm is NULL");
  const std::uint64_t bytes = count * element_bytes(dtype);
  if (const int rc = device_memory(buffer, bytes, "ncclRecv"); rc != EMBSCALE_CUDA_OK) return rc;
  queue(as_comm(comm), false, peer, buffer, bytes, 0);
  return issued();
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_all_reduce(const void* send, void* recv, uint64_t count, int dtype, int op,
                                                       void* comm, void* stream) {
  (void)stream;
  embscale_fake_clear_detail();
  if (!valid(dtype) || op < EMBSCALE_NCCL_SUM || op > EMBSCALE_NCCL_AVG || comm == nullptr)
    return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "ncclAllReduce: bad dtype or op, or comm is NULL");
  const std::size_t bytes = count * element_bytes(dtype);
  if (const int rc = check_buffers(send, bytes, recv, bytes, send == recv, "ncclAllReduce"); rc != EMBSCALE_CUDA_OK)
    return rc;
  const FakeComm* c = as_comm(comm);
  gather_everyone(c, send, bytes, [=](unsigned char* parts) {
    if (count > 0) reduce_parts(parts, static_cast<unsigned char*>(recv), count, dtype, op, c->nranks);
  });
  return issued();
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_reduce_scatter(const void* send, void* recv, uint64_t recv_count, int dtype,
                                                           int op, void* comm, void* stream) {
  (void)stream;
  embscale_fake_clear_detail();
  if (!valid(dtype) || op < EMBSCALE_NCCL_SUM || op > EMBSCALE_NCCL_AVG || comm == nullptr)
    return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "ncclReduceScatter: bad dtype or op, or comm is NULL");
  const FakeComm* c = as_comm(comm);
  const std::size_t bytes = recv_count * element_bytes(dtype);
  const auto* in = static_cast<const unsigned char*>(send);
  if (const int rc = check_buffers(send, bytes * static_cast<std::size_t>(c->nranks), recv, bytes,
                                   recv == in + static_cast<std::size_t>(c->rank) * bytes, "ncclReduceScatter");
      rc != EMBSCALE_CUDA_OK)
    return rc;
  // Segment r of every rank goes to rank r.
  auto& parts = group.scratch.emplace_back(bytes * static_cast<std::size_t>(c->nranks));
  unsigned char* base = parts.data();
  for (int r = 0; r < c->nranks; ++r) {
    if (r == c->rank) continue;
    queue(c, true, r, in + static_cast<std::size_t>(r) * bytes, bytes);
    queue(c, false, r, base + static_cast<std::size_t>(r) * bytes, bytes);
  }
  const std::size_t mine = static_cast<std::size_t>(c->rank) * bytes;
  if (bytes > 0) std::memcpy(base + mine, in + mine, bytes);
  group.finishes.push_back([=] {
    if (recv_count > 0) reduce_parts(base, static_cast<unsigned char*>(recv), recv_count, dtype, op, c->nranks);
  });
  return issued();
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_all_gather(const void* send, void* recv, uint64_t send_count, int dtype,
                                                       void* comm, void* stream) {
  (void)stream;
  embscale_fake_clear_detail();
  if (!valid(dtype) || comm == nullptr)
    return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "ncclAllGather: bad dtype, or comm is NULL");
  const FakeComm* c = as_comm(comm);
  const std::size_t bytes = send_count * element_bytes(dtype);
  auto* out = static_cast<unsigned char*>(recv);
  if (const int rc = check_buffers(send, bytes, recv, bytes * static_cast<std::size_t>(c->nranks),
                                   send == out + static_cast<std::size_t>(c->rank) * bytes, "ncclAllGather");
      rc != EMBSCALE_CUDA_OK)
    return rc;
  gather_everyone(c, send, bytes, [=](unsigned char* parts) {
    if (bytes > 0) std::memmove(out, parts, bytes * static_cast<std::size_t>(c->nranks));
  });
  return issued();
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_broadcast(const void* send, void* recv, uint64_t count, int dtype, int root,
                                                      void* comm, void* stream) {
  (void)stream;
  embscale_fake_clear_detail();
  if (!valid(dtype) || comm == nullptr || root < 0 || root >= as_comm(comm)->nranks)
    return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "ncclBroadcast: bad dtype or root, or comm is NULL");
  const FakeComm* c = as_comm(comm);
  const std::size_t bytes = count * element_bytes(dtype);
  if (c->rank == root) {
    if (const int rc = check_buffers(send, bytes, recv, bytes, send == recv, "ncclBroadcast"); rc != EMBSCALE_CUDA_OK)
      return rc;
    for (int r = 0; r < c->nranks; ++r)
      if (r != root) queue(c, true, r, send, bytes);
    if (send != recv && bytes > 0) std::memcpy(recv, send, bytes);
  } else {
    if (const int rc = device_memory(recv, bytes, "ncclBroadcast"); rc != EMBSCALE_CUDA_OK) return rc;
    queue(c, false, root, recv, bytes);
  }
  return issued();
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_nccl_reduce(const void* send, void* recv, uint64_t count, int dtype, int op,
                                                   int root, void* comm, void* stream) {
  (void)stream;
  embscale_fake_clear_detail();
  if (!valid(dtype) || op < EMBSCALE_NCCL_SUM || op > EMBSCALE_NCCL_AVG || comm == nullptr || root < 0 ||
      root >= as_comm(comm)->nranks)
    return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "ncclReduce: bad dtype, op or root, or comm is NULL");
  const FakeComm* c = as_comm(comm);
  const std::size_t bytes = count * element_bytes(dtype);
  if (c->rank != root) {
    if (const int rc = device_memory(send, bytes, "ncclReduce"); rc != EMBSCALE_CUDA_OK) return rc;
    queue(c, true, root, send, bytes);
    return issued();
  }
  if (const int rc = check_buffers(send, bytes, recv, bytes, send == recv, "ncclReduce"); rc != EMBSCALE_CUDA_OK)
    return rc;
  auto& parts = group.scratch.emplace_back(bytes * static_cast<std::size_t>(c->nranks));
  unsigned char* base = parts.data();
  for (int r = 0; r < c->nranks; ++r)
    if (r != root) queue(c, false, r, base + static_cast<std::size_t>(r) * bytes, bytes);
  if (bytes > 0) std::memcpy(base + static_cast<std::size_t>(root) * bytes, send, bytes);
  group.finishes.push_back([=] {
    if (count > 0) reduce_parts(base, static_cast<unsigned char*>(recv), count, dtype, op, c->nranks);
  });
  return issued();
}

}  // extern "C"

#endif /* EMBSCALE_FAKE_OMIT_NCCL */
