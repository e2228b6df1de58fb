// Routing of a rank's batch keys to their owners: de-duplicate, then group by owner rank.
// Sending each distinct key once is what makes the exchange volume depend on the skew of the
// workload (a Zipf batch repeats its hot keys) rather than on the raw batch size.
//
// Algorithm (expected O(n) for n keys; bench/micro/README.md "Key routing" has the measurements):
//   1. De-duplicate: an open-addressing hash table (linear probing, power-of-two capacity of at
//      least 2n slots, so the load stays at or below 1/2) gives each distinct key a dense id in
//      order of first occurrence; inverse[i] holds the id of keys[i] meanwhile. A slot is
//      occupied only when its generation stamp is the current call's, so a call starts from an
//      empty table without clearing it.
//   2. Owners: the caller's owner function once per distinct key. It is a template parameter,
//      inlined into one tight loop: the only per-key code that depends on the scheme.
//   3. Group: a stable counting sort of the ids by owner (histogram, prefix sums, scatter), then
//      inverse[i] = final position of its id.
// Without de-duplication, step 1 is the identity: every occurrence is its own "distinct" key.
// Single-threaded by design: every core already runs a rank.
#pragma once

#include <concepts>
#include <cstdint>
#include <span>
#include <vector>

#include "core/batch.hpp"
#include "core/huge_page_allocator.hpp"

namespace embscale::embedding {

// `key % ranks`: SOK's and HugeCTR's distributed placement.
struct ModuloSharding {
  int ranks = 1;
  int owner(Key key) const noexcept { return static_cast<int>(key % ranks); }
};

struct RoutedKeys {
  // The keys to send, grouped by owner in rank order. With de-duplication: each distinct key
  // once, in order of first occurrence within its group. Without: every occurrence, in input
  // order within its group.
  std::vector<Key> send_keys;
  // Number of send_keys for each owner rank (size: ranks).
  std::vector<std::size_t> send_counts;
  // For every input key occurrence i: send_keys[inverse[i]] == keys[i]. Without de-duplication
  // it is a permutation of [0, keys.size()).
  std::vector<std::uint32_t> inverse;
};

// De-duplication before the exchange: on by default, off to measure what it saves.
enum class Deduplication : bool { kOff = false, kOn = true };

// An owner function: Key -> rank in [0, ranks), called by value in an inlined loop (a lambda, a
// small struct with operator(); not std::function, whose indirect call per key costs more than
// the rest of the routing).
template <class F>
concept KeyOwner = std::regular_invocable<const F&, Key> && std::convertible_to < std::invoke_result_t<const F&, Key>,
int > ;

// Holds the scratch of the routing (hash table, owners, positions), so that routing batches of a
// steady size allocates nothing after the first. Not thread-safe: one per thread.
class KeyRouter {
 public:
  // Fills `out` (its vectors are reused, resized to this batch) with the routing of `keys` to
  // `ranks` owners. Throws embscale::Error when a key is negative, when the owner function returns
  // a rank outside [0, ranks), or when the batch has 2^32 - 1 keys or more (32-bit inverse). With
  // one rank the owner function is not called (every key is rank 0's).
  template <KeyOwner Owner>
  void route(std::span<const Key> keys, int ranks, const Owner& owner, RoutedKeys& out,
             Deduplication dedup = Deduplication::kOn) {
    const std::span<const Key> distinct = collect_distinct(keys, ranks, dedup, out);
    owners_.resize(distinct.size());
    if (ranks > 1)  // with one rank every owner is 0 by contract: no call needed
      for (std::size_t i = 0; i < distinct.size(); ++i) owners_[i] = static_cast<std::uint32_t>(owner(distinct[i]));
    group_by_owner(distinct, ranks, dedup, out);
  }

  // `key % ranks` (ModuloSharding::owner).
  void route(std::span<const Key> keys, const ModuloSharding& sharding, RoutedKeys& out,
             Deduplication dedup = Deduplication::kOn) {
    route(
        keys, sharding.ranks, [sharding](Key key) { return sharding.owner(key); }, out, dedup);
  }

 private:
  // Step 1: checks the input, sizes the scratch and `out`, and returns the distinct keys in order
  // of first occurrence (all of `keys` without de-duplication); with de-duplication
  // out.inverse[i] is the index of keys[i] among them.
  std::span<const Key> collect_distinct(std::span<const Key> keys, int ranks, Deduplication dedup, RoutedKeys& out);
  // Step 3: owners_[j] is the owner of distinct[j]; fills send_keys, send_counts, inverse.
  void group_by_owner(std::span<const Key> distinct, int ranks, Deduplication dedup, RoutedKeys& out);

  // A slot is occupied in this call only when stamp == stamp_ (stamp 0 is never current).
  struct Slot {
    Key key;
    std::uint32_t id;
    std::uint32_t stamp;
  };
  HugePageVector<Slot> slots_;  // 2n slots probed at random: on 2 MiB pages where the kernel gives them
  std::uint32_t stamp_ = 0;
  std::vector<Key> distinct_;               // distinct keys in order of first occurrence
  std::vector<std::uint32_t> owners_;       // owner of distinct key j
  std::vector<std::uint32_t> position_;     // index in send_keys of distinct key j
  static constexpr std::size_t kLanes = 4;  // independent chunks of the counting sort
  std::vector<std::size_t> lane_counters_;  // [lane][rank]: counts, then next free index in send_keys
};

// One-shot routing by `key % ranks`, de-duplicated (allocates its scratch: a steady-state caller
// holds a KeyRouter instead).
RoutedKeys route_keys(std::span<const Key> keys, const ModuloSharding& sharding);

}  // namespace embscale::embedding
