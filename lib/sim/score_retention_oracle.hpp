// ScoreRetentionOracle: the KV table's own score rules on one global table of `capacity` keys
// instead of buckets, in two memories:
//   kEveryKey   "ideal score retention" (the eviction study's score_retention): every key keeps
//               its score for life, evicted or not, so the table holds the top-capacity keys by
//               the table's own score (LFU: perfect LFU by count; STEP: LRU). A returning key
//               resumes from its remembered score. What the table would keep with no buckets and
//               no forgetting.
//   kResidents  the table's rules exactly, without buckets (the study's `unbucketed`): an evicted
//               key's score is forgotten and it returns as a newcomer (LFU: score 1 again). The
//               gap between the table and this oracle is what bucket-local placement costs; a
//               table of one bucket equals it (tests/sim/eviction_study_mpi_test.cpp).
//
// Rules (lib/kv/README.md, "Score strategies"; applied through kv/score_rules.hpp's functions, so
// a change there changes this): a call reads its call score once, before its keys; a key it
// inserts gets the new-key score, a key it finds (a hit) the present-key score. A newcomer takes a
// free place while fewer than `capacity` keys are resident; in a full table it replaces the
// resident of lowest (score, key) when its own score (kEveryKey: the present-key score from the
// one it remembers) is not lower, else it is refused. Keys are
// ordered as the table orders them: as uint64 (an int64 key's two's-complement bits).
//
// Clocks. TIMESTAMP's and EPOCH_LRU's clock (ns) is modelled by a counter advanced once per call,
// the same counter as STEP's (the first call reads 1): only the order of scores matters, and a
// counter gives every call its own, increasing score as an ideal clock would. EPOCH_LRU takes its
// low 32 bits under the epoch, as the table takes the clock's. The table's real clock can give two
// calls the same ns or, under EPOCH_LRU, wrap its low 32 bits every 4.3 s; the oracle does neither.
// CUSTOMIZED gives every key of a call the last set_score value (no per-key caller scores); the
// study (table_study.cpp) sets it, and the epoch, before each call as the engine's drivers set the
// table's (RowStore::set_score_clock).
// FREQUENCY's newcomer scores the admission filter's estimate of its sightings: here the exact
// count of its accesses so far (an ideal filter), never halved (the table halves a bucket's
// scores when its sketch bank ages; the oracle has no banks).
//
// Versus LRU: under STEP (and TIMESTAMP) every key of a call gets the call's score, so the oldest
// call's keys tie and the smallest key goes first, where LRU evicts the one accessed first. With
// one key per call STEP is exactly LRU; tests/sim/score_retention_oracle_test.cpp shows the
// difference inside a call.
//
// Structure: an indexed 4-ary min-heap of (score, key) over the residents, with each dense id's
// heap position: O(log capacity) per access. Memory: per distinct key 4 bytes (kEveryKey: 12)
// plus KeyIndex's 32-64; per capacity slot 24 bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "core/huge_page_allocator.hpp"
#include "kv/score_rules.hpp"
#include "kv/table_options.hpp"
#include "workloads/key_index.hpp"

namespace embscale::sim {

enum class ScoreMemory { kResidents, kEveryKey };

class ScoreRetentionOracle {
 public:
  // capacity >= 1 keys, at most 2^31.
  ScoreRetentionOracle(std::int64_t capacity, kv::ScoreStrategy strategy, ScoreMemory memory = ScoreMemory::kResidents);

  // Applies one call (a score-setting call such as find_or_insert) in order; returns its hits.
  // Keys distinct within the call.
  std::int64_t access(std::span<const std::int64_t> call);

  bool contains(std::int64_t key) const;
  // A resident key's score, or nothing.
  std::optional<std::uint64_t> score(std::int64_t key) const;
  // As HostTable::set_epoch and set_score: read by the calls that follow.
  void set_epoch(std::uint32_t epoch) noexcept { epoch_high_ = std::uint64_t{epoch} << 32; }
  void set_score(std::uint64_t score) noexcept { custom_score_ = score; }
  // Every resident key, in no particular order.
  void for_each_key(const std::function<void(std::int64_t)>& f) const;

  std::int64_t capacity() const noexcept { return capacity_; }
  std::int64_t size() const noexcept { return static_cast<std::int64_t>(heap_.size()); }
  // Newcomers turned away by a full table of higher scores, so far.
  std::int64_t refused() const noexcept { return refused_; }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  struct Entry {
    std::uint64_t score;
    std::uint64_t key;  // the key as the table orders it
    std::uint32_t id;
  };
  static bool lower(const Entry& a, const Entry& b) noexcept {
    return a.score != b.score ? a.score < b.score : a.key < b.key;
  }
  void place(std::size_t at, const Entry& e) noexcept {
    heap_[at] = e;
    position_[e.id] = static_cast<std::uint32_t>(at);
  }
  void sift_up(std::size_t at) noexcept;
  void sift_down(std::size_t at) noexcept;

  const kv::ScoreRules* rules_;  // a row of kv::kScoreRules
  workloads::KeyIndex index_;
  HugePageVector<std::uint32_t> position_;  // per dense id: its heap index, or kNone
  // kEveryKey: per dense id, the score it had when it last left or was refused (read when it
  // returns)
  HugePageVector<std::uint64_t> remembered_;
  ScoreMemory memory_;
  bool estimates_;                           // FREQUENCY: newcomers score their sightings
  HugePageVector<std::uint32_t> sightings_;  // per dense id: accesses so far (when estimates_)
  HugePageVector<Entry> heap_;               // heap_[0] is the lowest (score, key)
  std::vector<std::uint32_t> ids_;           // one call's ids (scratch, kept)
  std::uint64_t calls_ = 0;                  // the clock and the step: advanced once per call
  std::uint64_t epoch_high_ = 0;
  std::uint64_t custom_score_ = 0;
  std::int64_t capacity_;
  std::int64_t refused_ = 0;
};

}  // namespace embscale::sim
