// The typed conformance suite of KvTable<Key>: one randomized call sequence (fixed seed) run on
// a table and mirrored on the reference model (reference_table.hpp), comparing every output
// (found flags, rows, scores, evicted entries, counts) after every call and the whole contents
// periodically. Every implementation of KvTable runs it: tests/kv/host_kv_table_test.cpp for
// HostKvTable (the CPU table), tests/kv/portable_kv_table_test.cpp for PortableKvTable (the GPU
// table's logic on the host), through run_against_reference below.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "kv/kv_table.hpp"
#include "reference_table.hpp"

namespace embscale::kv::testing {

// A clock that ticks once per reading: the table and the reference each own one and read it
// once per score-setting call, so their sequences agree. A tick is a little over EPOCH_LRU's unit
// (2^20 ns), so that its scores tick too, and crosses the 2^32 ns at which the clock's low 32 bits
// in ns wrap (EPOCH_LRU's scores once did) within a run's first 4096 calls.
inline std::function<std::uint64_t()> ticking_clock() {
  auto t = std::make_shared<std::uint64_t>((std::uint64_t{1} << 32) - 1000 * (std::uint64_t{1} << 20));
  return [t] { return *t += (std::uint64_t{1} << 20) + 7; };
}

// Admission filters for the conformance runs: small counters and short aging periods, so that
// saturation, halving and growth of the sketch's banks all happen within one run.
inline AdmissionOptions small_admission(AdmissionOptions::Kind kind) {
  AdmissionOptions a;
  a.kind = kind;
  a.seed = 7;
  if (kind == AdmissionOptions::Kind::kKCount) {
    a.threshold_k = 2;
    a.max_count = 3;
    a.depth = 2;
    a.cells_per_slot = 1.0;
    a.aging_factor = 4.0;  // a bank halves after 64 sightings (bucket_capacity 16)
  } else {
    a.max_count = 15;
    a.depth = 4;
    a.cells_per_slot = 2.0;
    a.aging_factor = 3.0;
  }
  return a;
}

inline TableOptions small_options(ScoreStrategy strategy, ValueType type) {
  TableOptions o;
  o.dim = 3;
  o.optimizer_state_width = 2;
  o.value_type = type;
  o.bucket_capacity = 16;
  o.init_capacity = 32;  // 2 buckets: growth happens
  o.max_capacity = 128;  // 8 buckets at most: eviction and refusal happen
  o.max_load_factor = 0.75;
  o.score_strategy = strategy;
  o.initializer.mode = InitializerMode::kUniform;
  o.seed = 42;
  return o;
}

// 400 distinct keys (~3x the maximum capacity) that are not reserved: for int64 negative ones
// too, for uint64 some just below the reserved range.
template <TableKey Key> std::vector<Key> key_space() {
  std::vector<Key> keys;
  if constexpr (std::same_as<Key, std::int64_t>) {
    for (Key k = -196; k <= -4; ++k) keys.push_back(k);
    for (Key k = 0; k < 207; ++k) keys.push_back(k);
  } else {
    for (Key k = 0; k < 390; ++k) keys.push_back(k);
    for (Key j = 0; j < 10; ++j) keys.push_back(kFirstReservedKey - 1 - j);
  }
  return keys;
}

template <TableKey Key> std::vector<std::uint64_t> stored(const std::vector<Key>& keys) {
  return {keys.begin(), keys.end()};  // the bit pattern (two's complement for int64)
}

inline std::vector<float> row_of(const std::vector<float>& rows, std::size_t i, std::size_t w) {
  return {rows.begin() + static_cast<long>(i * w), rows.begin() + static_cast<long>((i + 1) * w)};
}

template <TableKey Key> void expect_same_entries(const Entries<Key>& got, const Evicted& want) {
  ASSERT_EQ(stored(got.keys), want.keys);
  ASSERT_EQ(got.scores, want.scores);
  ASSERT_EQ(got.values, want.values);
}

// The whole contents, through export_batch over every slot in pieces, against the reference.
template <TableKey Key> void expect_same_contents(const KvTable<Key>& table, const ReferenceTable& reference) {
  Entries<Key> all, piece;
  const std::int64_t step = 48;  // not a multiple of the bucket size: pieces cut buckets
  for (std::int64_t offset = 0; offset < table.capacity(); offset += step) {
    table.export_batch(offset, step, piece);
    all.keys.insert(all.keys.end(), piece.keys.begin(), piece.keys.end());
    all.values.insert(all.values.end(), piece.values.begin(), piece.values.end());
    all.scores.insert(all.scores.end(), piece.scores.begin(), piece.scores.end());
  }
  ASSERT_EQ(static_cast<std::int64_t>(all.size()), table.size());
  const auto want = reference.entries();
  ASSERT_EQ(all.size(), want.size());
  const auto w = static_cast<std::size_t>(table.row_width());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto it = want.find(static_cast<std::uint64_t>(all.keys[i]));
    ASSERT_NE(it, want.end()) << "key " << all.keys[i] << " is not in the reference";
    EXPECT_EQ(all.scores[i], it->second.score) << "key " << all.keys[i];
    EXPECT_EQ(row_of(all.values, i, w), it->second.row) << "key " << all.keys[i];
  }
}

// One randomized sequence of 400 calls on `table`, mirrored on `reference`.
template <TableKey Key>
void run_conformance(KvTable<Key>& table, ReferenceTable& reference, ScoreStrategy strategy, std::uint64_t seed) {
  const auto w = static_cast<std::size_t>(table.row_width());
  ASSERT_EQ(static_cast<std::int64_t>(w), reference.width());
  const std::vector<Key> space = key_space<Key>();

  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> key_of(0, space.size() - 1);
  std::uniform_real_distribution<float> value_of(-2.0f, 2.0f);
  std::uniform_int_distribution<std::uint64_t> score_of(0, 50);  // CUSTOMIZED: ties and refusals

  CallStats seen;  // what the sequence exercised, so that a passing run means something
  std::vector<int> ops_seen(10, 0);
  const auto initial_capacity = table.capacity();
  for (int call = 0; call < 400; ++call) {
    const std::size_t n = 1 + rng() % 24;
    std::vector<Key> keys(n);
    std::vector<std::uint64_t> scores(n);
    std::vector<float> values(n * w);
    std::vector<std::uint8_t> flags(n);
    for (auto& k : keys) k = space[key_of(rng)];
    for (auto& v : values) v = value_of(rng);
    for (auto& s : scores) s = score_of(rng);
    for (auto& f : flags) f = static_cast<std::uint8_t>(rng() % 2);
    const std::vector<std::uint64_t> ref_keys = stored(keys);
    const std::span<const std::uint64_t> custom = strategy == ScoreStrategy::kCustomized && rng() % 4
                                                      ? std::span<const std::uint64_t>(scores)
                                                      : std::span<const std::uint64_t>();
    if (strategy == ScoreStrategy::kCustomized && custom.empty()) {
      table.set_score(static_cast<std::uint64_t>(call));
      reference.set_score(static_cast<std::uint64_t>(call));
    }
    if ((strategy == ScoreStrategy::kEpochLru || strategy == ScoreStrategy::kEpochLfu) && call % 100 == 99) {
      table.set_epoch(static_cast<std::uint32_t>(call / 100 + 1));
      reference.set_epoch(static_cast<std::uint32_t>(call / 100 + 1));
    }
    const int op = static_cast<int>(rng() % 10);
    ++ops_seen[static_cast<std::size_t>(op)];
    SCOPED_TRACE("call " + std::to_string(call) + ", op " + std::to_string(op));
    CallStats got, want;
    switch (op) {
      case 0:
      case 1:
        got = table.insert_or_assign(keys, values, custom);
        want = reference.upsert(ref_keys, values, custom, nullptr);
        break;
      case 2: {
        Entries<Key> e_got;
        Evicted e_want;
        got = table.insert_and_evict(keys, values, custom, e_got);
        want = reference.upsert(ref_keys, values, custom, &e_want);
        expect_same_entries(e_got, e_want);
        break;
      }
      case 3: {
        std::vector<float> out(n * w, -9.0f), want_out;
        std::vector<std::uint8_t> founds(n), want_founds;
        got = table.find_or_insert(keys, out, founds, custom);
        want = reference.find_or_insert(ref_keys, want_out, want_founds, custom);
        ASSERT_EQ(founds, want_founds);
        ASSERT_EQ(out, want_out);
        break;
      }
      case 4: {
        std::vector<float> out(n * w, -9.0f);
        std::vector<std::uint8_t> founds(n);
        got = table.find_and_update(keys, out, founds);
        want = reference.find_and_update(ref_keys);
        for (std::size_t i = 0; i < n; ++i) {
          const auto* e = reference.lookup(ref_keys[i]);
          ASSERT_EQ(founds[i], e != nullptr) << i;
          if (e) {
            ASSERT_EQ(row_of(out, i, w), e->row) << i;
          }
        }
        break;
      }
      case 5:
        got = table.accum_or_assign(keys, values, flags, custom);
        want = reference.accum_or_assign(ref_keys, values, flags, custom);
        break;
      case 6:
        if (rng() % 2) {
          got = table.assign(keys, values);
          want = reference.assign(ref_keys, values);
        } else {
          got = table.assign_scores(keys, scores);
          want = reference.assign_scores(ref_keys, scores);
        }
        break;
      case 7:
        got = table.erase(keys);
        want = reference.erase(ref_keys);
        break;
      case 8: {  // entries put back with their own scores, whatever the strategy
        Entries<Key> e_got;
        Evicted e_want;
        got = table.restore(keys, values, scores, &e_got);
        want = reference.restore(ref_keys, values, scores, &e_want);
        expect_same_entries(e_got, e_want);
        break;
      }
      case 9: {  // an incremental export at a threshold from the middle of the scores
        const std::uint64_t threshold = reference.entries().empty() ? 0 : reference.entries().begin()->second.score;
        Entries<Key> got_entries;
        table.export_batch_if(threshold, got_entries);
        std::size_t expected = 0;
        for (const auto& [k, e] : reference.entries()) expected += e.score >= threshold;
        ASSERT_EQ(got_entries.size(), expected);
        for (std::size_t i = 0; i < got_entries.size(); ++i) {
          const auto* e = reference.lookup(static_cast<std::uint64_t>(got_entries.keys[i]));
          ASSERT_NE(e, nullptr);
          ASSERT_GE(e->score, threshold);
          ASSERT_EQ(got_entries.scores[i], e->score);
          ASSERT_EQ(row_of(got_entries.values, i, w), e->row);
        }
        break;
      }
    }
    ASSERT_EQ(got.found, want.found);
    ASSERT_EQ(got.inserted, want.inserted);
    ASSERT_EQ(got.evicted, want.evicted);
    ASSERT_EQ(got.refused, want.refused);
    ASSERT_EQ(got.not_admitted, want.not_admitted);
    ASSERT_EQ(table.size(), reference.size());
    ASSERT_EQ(table.capacity(), reference.capacity());
    seen += got;
    if (call % 25 == 24) expect_same_contents(table, reference);
  }
  expect_same_contents(table, reference);
  EXPECT_GT(table.capacity(), initial_capacity) << "the table never grew";
  EXPECT_EQ(table.capacity(), 128) << "the table should reach max_capacity";
  EXPECT_GT(seen.evicted, 0) << "nothing was evicted";
  EXPECT_GT(seen.found, 0);
  for (int op = 0; op < 10; ++op) EXPECT_GT(ops_seen[static_cast<std::size_t>(op)], 0) << "op " << op << " never ran";
  if (strategy == ScoreStrategy::kCustomized || strategy == ScoreStrategy::kLfu) {
    EXPECT_GT(seen.refused, 0) << "no newcomer was refused";  // a warm bucket refuses score-1 keys
  }
  if (table.options().admission.kind != AdmissionOptions::Kind::kNone) {
    EXPECT_GT(seen.not_admitted, 0) << "the admission filter never kept a newcomer out";
  } else {
    EXPECT_EQ(seen.not_admitted, 0);
  }
  // find and contains agree with the contents on every key of the space, present or not.
  std::vector<float> out(space.size() * w);
  std::vector<std::uint8_t> founds(space.size()), contained(space.size());
  std::vector<std::uint64_t> scores(space.size());
  table.find(space, out, founds, scores);
  table.contains(space, contained);
  EXPECT_EQ(founds, contained);
  for (std::size_t k = 0; k < space.size(); ++k) {
    const auto* e = reference.lookup(static_cast<std::uint64_t>(space[k]));
    ASSERT_EQ(founds[k], e != nullptr) << space[k];
    if (!e) continue;
    EXPECT_EQ(scores[k], e->score) << space[k];
    EXPECT_EQ(row_of(out, k, w), e->row) << space[k];
  }
  // erase_if through the interface sees the caller's key type.
  const std::int64_t before = table.size();
  const std::int64_t erased = table.erase_if([](Key key, std::uint64_t) { return key % 2 == 0; });
  std::int64_t even = 0;
  for (const auto& [k, e] : reference.entries()) even += static_cast<Key>(k) % 2 == 0;
  EXPECT_EQ(erased, even);
  EXPECT_EQ(table.size(), before - even);
}

// The suite on a TableOf<Key> of `options` (Key: the key type's), run where `context` says,
// against a reference of the same options, each with its own ticking clock (so that both see the
// same sequence of times).
template <template <class> class TableOf>
void run_against_reference(KeyType key_type, TableOptions options, ScoreStrategy strategy, std::uint64_t seed,
                           ExecutionContext context) {
  options.clock = ticking_clock();
  ReferenceTable reference(options);
  options.clock = ticking_clock();
  const auto run = [&]<class Key>(Key) {
    TableOf<Key> table(options);
    table.set_execution_context(context);
    run_conformance<Key>(table, reference, strategy, seed);
  };
  if (key_type == KeyType::kInt64) run(std::int64_t{});
  else run(std::uint64_t{});
}

}  // namespace embscale::kv::testing
