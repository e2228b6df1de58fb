// The reference model of a dynamic table: the semantics of lib/kv/host_table.hpp written as
// plainly as possible (a std::map per bucket, one key at a time), for the conformance tests.
// It shares with the table only what the semantics define: the bucket of a key
// (mix64(key) & (buckets - 1)), the initial rows (kv/initializer.hpp, tested on its own) and
// the options; admission is tests/kv/admission_reference.hpp, called at the points the table's
// header names (newcomers with their placement, hits that touch a score; restore bypasses it).
// Rounding to fp16 uses the compiler's _Float16, to bf16 frexp/ldexp, not the
// table's conversions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "admission_reference.hpp"
#include "core/hash.hpp"
#include "kv/host_table.hpp"
#include "kv/initializer.hpp"

namespace embscale::kv::testing {

class ReferenceTable {
 public:
  struct Entry {
    std::uint64_t score = 0;
    std::vector<float> row;
  };

  explicit ReferenceTable(TableOptions o) : o_(std::move(o)), admission_(o_.admission, o_.bucket_capacity, 1) {
    if (o_.num_embeddings == 0) o_.num_embeddings = o_.max_capacity;
    width_ = o_.dim + (o_.training ? o_.optimizer_state_width : 0);
    const std::int64_t initial = o_.init_capacity ? o_.init_capacity : o_.max_capacity;
    nb_ = 1;
    while (nb_ * o_.bucket_capacity < initial) nb_ *= 2;
    buckets_.resize(static_cast<std::size_t>(nb_));
    admission_ = ReferenceAdmission(o_.admission, o_.bucket_capacity, nb_);
  }

  std::int64_t size() const {
    std::int64_t n = 0;
    for (const auto& b : buckets_) n += static_cast<std::int64_t>(b.size());
    return n;
  }
  std::int64_t capacity() const { return nb_ * o_.bucket_capacity; }
  std::int64_t width() const { return width_; }
  void set_score(std::uint64_t s) { custom_ = s; }
  void set_epoch(std::uint32_t e) { epoch_ = e; }
  // Every entry, by key.
  std::map<std::uint64_t, Entry> entries() const {
    std::map<std::uint64_t, Entry> all;
    for (const auto& b : buckets_) all.insert(b.begin(), b.end());
    return all;
  }
  const Entry* lookup(std::uint64_t key) const {
    const auto& b = bucket(key);
    const auto it = b.find(key);
    return it == b.end() ? nullptr : &it->second;
  }

  // --- the operations, one key at a time -----------------------------------------------------
  CallStats upsert(std::span<const std::uint64_t> keys, std::span<const float> values,
                   std::span<const std::uint64_t> custom, Evicted* evicted) {
    grow(static_cast<std::int64_t>(keys.size()));
    begin_call();
    CallStats st;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      Entry* e = find_entry(keys[i]);
      if (e) {
        ++st.found;
        e->score = touched(i, e->score, custom);
        sighted(keys[i]);
      } else {
        e = admit(keys[i], fresh(i, custom), st, evicted);
        if (!e) continue;
      }
      e->row = stored(values.subspan(i * w(), w()));
    }
    return st;
  }

  CallStats find_or_insert(std::span<const std::uint64_t> keys, std::vector<float>& out,
                           std::vector<std::uint8_t>& founds, std::span<const std::uint64_t> custom) {
    out.assign(keys.size() * w(), 0.0f);
    founds.assign(keys.size(), 0);
    CallStats st;
    if (!o_.training) {
      for (std::size_t i = 0; i < keys.size(); ++i) {
        const Entry* e = lookup(keys[i]);
        founds[i] = e != nullptr;
        std::vector<float> row(w());
        if (e) {
          ++st.found;
          row = e->row;
        } else {
          initial_row(o_.eval_initializer, o_.seed, o_.num_embeddings, keys[i], o_.dim, row);
        }
        std::copy(row.begin(), row.end(), out.begin() + static_cast<long>(i * w()));
      }
      return st;
    }
    grow(static_cast<std::int64_t>(keys.size()));
    begin_call();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      Entry* e = find_entry(keys[i]);
      founds[i] = e != nullptr;
      if (e) {
        ++st.found;
        e->score = touched(i, e->score, custom);
        sighted(keys[i]);
      } else {
        const std::int64_t not_admitted = st.not_admitted;
        e = admit(keys[i], fresh(i, custom), st, nullptr);
        if (!e && st.not_admitted > not_admitted) {  // kept out: the initializer's row, not stored
          std::vector<float> row(w());
          initial_row(o_.initializer, o_.seed, o_.num_embeddings, keys[i], o_.dim, row);
          std::copy(row.begin(), row.end(), out.begin() + static_cast<long>(i * w()));
        }
        if (!e) continue;  // refused: zeros
        std::vector<float> row(w());
        initial_row(o_.initializer, o_.seed, o_.num_embeddings, keys[i], o_.dim, row);
        e->row = stored(row);
      }
      std::copy(e->row.begin(), e->row.end(), out.begin() + static_cast<long>(i * w()));
    }
    return st;
  }

  CallStats find_and_update(std::span<const std::uint64_t> keys) {
    begin_call();
    CallStats st;
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (Entry* e = find_entry(keys[i])) {
        ++st.found;
        e->score = touched(i, e->score, {});
        sighted(keys[i]);
      }
    return st;
  }

  CallStats assign(std::span<const std::uint64_t> keys, std::span<const float> values) {
    CallStats st;
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (Entry* e = find_entry(keys[i])) {
        ++st.found;
        e->row = stored(values.subspan(i * w(), w()));
      }
    return st;
  }

  CallStats assign_scores(std::span<const std::uint64_t> keys, std::span<const std::uint64_t> custom) {
    begin_call();
    CallStats st;
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (Entry* e = find_entry(keys[i])) {
        ++st.found;
        e->score = touched(i, e->score, custom);
        sighted(keys[i]);
      }
    return st;
  }

  CallStats accum_or_assign(std::span<const std::uint64_t> keys, std::span<const float> values,
                            std::span<const std::uint8_t> accumulate, std::span<const std::uint64_t> custom) {
    grow(static_cast<std::int64_t>(std::count(accumulate.begin(), accumulate.end(), std::uint8_t{0})));
    begin_call();
    CallStats st;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      Entry* e = find_entry(keys[i]);
      const auto v = values.subspan(i * w(), w());
      if (e) {
        ++st.found;
        if (!accumulate[i]) continue;
        e->score = touched(i, e->score, custom);
        sighted(keys[i]);
        std::vector<float> sum(e->row);
        for (std::size_t d = 0; d < sum.size(); ++d) sum[d] += v[d];
        e->row = stored(sum);
      } else if (!accumulate[i]) {
        if (Entry* n = admit(keys[i], fresh(i, custom), st, nullptr)) n->row = stored(v);
      }
    }
    return st;
  }

  CallStats restore(std::span<const std::uint64_t> keys, std::span<const float> values,
                    std::span<const std::uint64_t> scores, Evicted* evicted) {
    grow(static_cast<std::int64_t>(keys.size()));
    CallStats st;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      Entry* e = find_entry(keys[i]);
      if (e) {
        ++st.found;
        e->score = scores[i];
      } else {
        e = admit(keys[i], scores[i], st, evicted, /*filtered=*/false);
        if (!e) continue;
      }
      e->row = stored(values.subspan(i * w(), w()));
    }
    return st;
  }

  CallStats erase(std::span<const std::uint64_t> keys) {
    CallStats st;
    for (const auto k : keys) st.found += static_cast<std::int64_t>(bucket(k).erase(k));
    return st;
  }

 private:
  std::size_t w() const { return static_cast<std::size_t>(width_); }
  std::map<std::uint64_t, Entry>& bucket(std::uint64_t key) {
    return buckets_[static_cast<std::size_t>(mix64(key) & static_cast<std::uint64_t>(nb_ - 1))];
  }
  const std::map<std::uint64_t, Entry>& bucket(std::uint64_t key) const {
    return buckets_[static_cast<std::size_t>(mix64(key) & static_cast<std::uint64_t>(nb_ - 1))];
  }
  Entry* find_entry(std::uint64_t key) {
    auto& b = bucket(key);
    const auto it = b.find(key);
    return it == b.end() ? nullptr : &it->second;
  }

  // Growth before a call that may insert `incoming` keys: double while over the load factor.
  void grow(std::int64_t incoming) {
    std::int64_t nb = nb_;
    while (static_cast<double>(size() + incoming) > o_.max_load_factor * static_cast<double>(nb * o_.bucket_capacity) &&
           nb * 2 * o_.bucket_capacity <= o_.max_capacity)
      nb *= 2;
    if (nb == nb_) return;
    const auto all = entries();
    admission_.grow(nb);
    nb_ = nb;
    buckets_.assign(static_cast<std::size_t>(nb_), {});
    for (const auto& [k, e] : all) bucket(k)[k] = e;
  }

  // Admission into the key's bucket: a free slot, else replace the lowest (score, key) entry
  // when the newcomer's score is not lower; either way only if the filter (when `filtered`)
  // lets it in. The filter sees every newcomer, refused ones too, before its score is taken
  // (FREQUENCY's new key scores the filter's estimate, this sighting included).
  Entry* admit(std::uint64_t key, std::uint64_t score, CallStats& st, Evicted* evicted, bool filtered = true) {
    auto& b = bucket(key);
    filtered = filtered && admission_.enabled();
    if (filtered) {
      sighted(key);
      if (o_.score_strategy == ScoreStrategy::kFrequency)
        score = static_cast<std::uint64_t>(std::max(admission_.estimate(key), 1));
    }
    if (static_cast<std::int64_t>(b.size()) < o_.bucket_capacity) {
      if (filtered && !admission_.admits(key, Placement::kFreeSlot, 0)) {
        ++st.not_admitted;
        return nullptr;
      }
    } else {
      auto victim = b.begin();
      for (auto it = b.begin(); it != b.end(); ++it)
        if (it->second.score < victim->second.score) victim = it;  // map order: ties keep the smaller key
      if (score < victim->second.score) {
        ++st.refused;
        return nullptr;
      }
      if (filtered && !admission_.admits(key, Placement::kEvict, victim->first)) {
        ++st.not_admitted;
        return nullptr;
      }
      ++st.evicted;
      if (evicted) {
        evicted->keys.push_back(victim->first);
        evicted->scores.push_back(victim->second.score);
        evicted->values.insert(evicted->values.end(), victim->second.row.begin(), victim->second.row.end());
      }
      b.erase(victim);
    }
    ++st.inserted;
    Entry& e = b[key];
    e.score = score;
    return &e;
  }

  // A sighting of `key` for the filter; under FREQUENCY, a sighting that ages the key's bank
  // halves every score of the key's bucket.
  void sighted(std::uint64_t key) {
    if (admission_.record(key) && o_.score_strategy == ScoreStrategy::kFrequency)
      for (auto& [k, e] : bucket(key)) e.score /= 2;
  }

  // --- scores --------------------------------------------------------------------------------
  void begin_call() {
    switch (o_.score_strategy) {
      case ScoreStrategy::kStep: call_ = ++step_; break;
      case ScoreStrategy::kTimestamp: call_ = o_.clock(); break;
      // The clock in 2^20 ns units (HierarchicalKV's ~1 ms), its low 32 bits.
      case ScoreStrategy::kEpochLru:
        call_ = (std::uint64_t{epoch_} << 32) | ((o_.clock() >> 20) & 0xFFFFFFFFULL);
        break;
      case ScoreStrategy::kCustomized: call_ = custom_; break;
      default: break;
    }
  }
  std::uint64_t fresh(std::size_t i, std::span<const std::uint64_t> custom) const {
    switch (o_.score_strategy) {
      case ScoreStrategy::kCustomized: return custom.empty() ? call_ : custom[i];
      case ScoreStrategy::kLfu: return 1;
      case ScoreStrategy::kFrequency: return 1;  // admit() replaces it with the filter's estimate
      case ScoreStrategy::kEpochLfu: return (std::uint64_t{epoch_} << 32) + 1;
      default: return call_;
    }
  }
  std::uint64_t touched(std::size_t i, std::uint64_t old, std::span<const std::uint64_t> custom) const {
    if (o_.score_strategy == ScoreStrategy::kLfu || o_.score_strategy == ScoreStrategy::kFrequency)
      return old + 1;  // tests stay far from 2^64
    if (o_.score_strategy == ScoreStrategy::kEpochLfu)
      return (old >> 32) == epoch_ ? old + 1 : (std::uint64_t{epoch_} << 32) + 1;
    return fresh(i, custom);
  }

  // --- storage rounding, independent of the table's conversions --------------------------------
  float round_to_type(float x) const {
    if (o_.value_type == ValueType::kFloat16) return static_cast<float>(static_cast<_Float16>(x));
    if (o_.value_type == ValueType::kBFloat16) {
      if (x == 0.0f || !std::isfinite(x)) return x;
      int exponent = 0;
      const double m = std::frexp(static_cast<double>(x), &exponent);  // x = m 2^e, |m| in [0.5, 1)
      const double r = std::nearbyint(std::ldexp(m, 8));               // 8 significant bits, ties to even
      return static_cast<float>(std::ldexp(r, exponent - 8));
    }
    return x;
  }
  std::vector<float> stored(std::span<const float> row) const {
    std::vector<float> out(row.begin(), row.end());
    for (auto& v : out) v = round_to_type(v);
    return out;
  }

  TableOptions o_;
  std::int64_t width_ = 0;
  std::int64_t nb_ = 1;
  std::vector<std::map<std::uint64_t, Entry>> buckets_;
  ReferenceAdmission admission_;
  std::uint64_t step_ = 0, custom_ = 0, call_ = 0;
  std::uint32_t epoch_ = 0;
};

}  // namespace embscale::kv::testing
