// The parameter server's wire protocol (Paddle's distributed lookup table): trainers
// split a batch's distinct ids by the same hash the servers shard by (split_ids), pull the rows
// they need (prefetch) and push their gradients back (send); each server owns the ids that hash
// to it. Messages, between one trainer and one server, in this order per trainer:
//   pull:  Header{kPull, step, n} (kHeaderTag), n keys (kKeysTag); the server answers n rows of
//          dim floats (kRowsTag) once the step may read (ParameterServer's rules), then, when the
//          run has dense layers, its slice of the dense parameters (kDenseValuesTag)
//   push:  Header{kPush, step, n}, n keys (kKeysTag), n x dim gradients (kGradsTag), then the
//          dense gradients of the server's slice (kDenseGradsTag) when there are dense layers; no
//          answer
//   done:  Header{kDone, last step, 0}: the trainer sends nothing more
//   read:  Header{kRead, step, n}, n keys: an evaluation's read (ParameterServer::serve_evaluation),
//          answered as a pull of that step is (its rows, then the dense slice), the table
//          unchanged (no insert, no score, no counter)
//   reads done: Header{kReadsDone, step, 0}: this trainer's evaluation has read all it needs
// A trainer sends a pull and a push to every server every step, with n = 0 where it has no ids
// there: a server counts the trainers' requests per step, so it knows when a step is complete.
// Headers are received from any source (MessageChannel::recv_any); payloads by their source.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/batch.hpp"
#include "core/hash.hpp"

namespace embscale::ps {

enum class RequestKind : std::int64_t { kPull = 1, kPush = 2, kDone = 3, kRead = 4, kReadsDone = 5 };

struct Header {
  RequestKind kind = RequestKind::kDone;
  std::int64_t step = 0;  // 1-based training step
  std::int64_t keys = 0;  // keys that follow (pull, push)
};

inline constexpr int kHeaderTag = 7001, kKeysTag = 7002, kGradsTag = 7003, kRowsTag = 7004;
inline constexpr int kDenseValuesTag = 7005, kDenseGradsTag = 7006;

// The dense parameters (the model's replicated ones, `count` values) are split into one contiguous
// slice per server, in server order: server s holds [first, first + count) of them.
struct DenseSlice {
  std::size_t first = 0;
  std::size_t count = 0;
};
inline DenseSlice dense_slice(std::size_t parameters, int servers, int server) noexcept {
  const auto n = static_cast<std::size_t>(servers), s = static_cast<std::size_t>(server);
  const std::size_t first = parameters * s / n;
  return {first, parameters * (s + 1) / n - first};
}

// The server (0 .. servers-1) that owns `key`: a hash, so that consecutive ids (a Zipf head at the
// low ids of a table) spread over the servers instead of landing on one. Seeded apart from the KV
// table's own mix64(key) bucketing: with the same hash a server's keys would all share
// mix64(key) % servers and fill only some of its table's buckets.
inline constexpr std::uint64_t kShardSeed = 0x5053'4b45'5953ULL;
inline int server_of(Key key, int servers) noexcept {
  return static_cast<int>(hash_combine(kShardSeed, static_cast<std::uint64_t>(key)) %
                          static_cast<std::uint64_t>(servers));
}

// Where ids live. Hashed: server_of above, in a dynamic table (ids inserted as they come).
// Strided: static storage, id % servers, at row id / servers of that server's array: an address a
// trainer computes, so that it can read the row one-sidedly (one_sided_pulls.hpp). Consecutive
// ids go to consecutive servers, so a Zipf head at the low ids spreads too.
enum class Placement { kHashed, kStrided };
inline int server_of(Key key, int servers, Placement placement) noexcept {
  return placement == Placement::kHashed ? server_of(key, servers) : static_cast<int>(key % static_cast<Key>(servers));
}
inline std::int64_t strided_row(Key key, int servers) noexcept { return key / static_cast<Key>(servers); }

}  // namespace embscale::ps
