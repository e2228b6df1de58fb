// The GPU table's batch calls (libembscale_cuda.so's kv_table family, kernels/kv_table.cu) against
// the same portable code run on the host (kv/portable/host_batch.hpp), which the CPU tests hold to
// the CPU table's reference model through PortableTable (tests/kv/portable_kv_table_test.cpp).
// Differential and exact: after every call the outcomes, returned rows and scores and evicted
// entries are compared bit for bit, and every few calls the whole table (keys, scores, digests,
// rows) and the admission sketch: one tile per bucket group in input order makes the device's
// result the host's, whatever order the tiles run in.
//
// Randomized call sequences (fixed seeds) of every batch call, with duplicate keys, growth
// (rehash on both sides), eviction, refusal and admission, under every score strategy, with and
// without the filters, for 16- and 128-slot buckets (tiles of 16 and 32 lanes); the grouping
// itself against the host's stable sort, large batches included; and the NORMAL and
// TRUNCATED_NORMAL initializers to within one float ulp (the device's math library).
//
// Standalone (cudart and libembscale_cuda.so, no GoogleTest): exits 77 without a GPU.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "device/families/kv_table.h"
#include "gpu_check.hpp"
#include "kv/portable/host_batch.hpp"

namespace {

namespace portable = embscale::kv::portable;
using embscale::kv::InitializerMode;
using embscale::kv::ScoreStrategy;
using portable::BatchOp;

using embscale::gpu_check::DeviceArray;

template <class T> bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Pinned host memory mapped for the device (the family's host_alloc: hybrid mode's far rows).
class PinnedArray {
 public:
  explicit PinnedArray(const std::vector<float>& from) : n_(from.size()) {
    void* p = nullptr;
    ABI_OK(embscale_cuda_kv_table_host_alloc(n_ * sizeof(float), &p));
    data_ = static_cast<float*>(p);
    if (n_) std::memcpy(data_, from.data(), n_ * sizeof(float));
  }
  PinnedArray(PinnedArray&& o) noexcept : data_(o.data_), n_(o.n_) { o.data_ = nullptr, o.n_ = 0; }
  PinnedArray& operator=(PinnedArray&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~PinnedArray() { embscale_cuda_kv_table_host_free(data_); }
  std::vector<float> download() const { return std::vector<float>(data_, data_ + n_); }  // after a sync
  float* get() const { return data_; }

 private:
  float* data_ = nullptr;
  std::size_t n_ = 0;
};

// The table of one scenario on the host: arrays and sketch. Hybrid when near_buckets is below
// buckets: the later buckets' rows are in far_rows.
struct HostImage {
  HostImage(std::uint64_t buckets_, std::uint32_t capacity_, std::uint32_t width_, std::uint64_t blocks_,
            std::uint64_t near_buckets = ~std::uint64_t{0})
      : buckets(buckets_), capacity(capacity_), width(width_), blocks(blocks_),
        near_slots((near_buckets < buckets ? near_buckets : buckets) * capacity),
        keys(buckets * capacity, portable::kEmptyKey), scores(keys.size(), 0), digests(keys.size(), 0),
        rows(near_slots * width, 0.0f), far_rows((keys.size() - near_slots) * width, 0.0f),
        counters(buckets * blocks * 64, 0), sightings(buckets, 0) {}
  portable::TableArrays arrays() {
    portable::TableArrays a{keys.data(), scores.data(), digests.data(), rows.data(), buckets, capacity, width};
    a.far_rows = far_rows.data();
    a.near_slots = near_slots;
    return a;
  }
  std::uint64_t buckets;
  std::uint32_t capacity, width;
  std::uint64_t blocks, near_slots;
  std::vector<std::uint64_t> keys, scores;
  std::vector<std::uint8_t> digests;
  std::vector<float> rows, far_rows;
  std::vector<std::uint8_t> counters;
  std::vector<std::uint32_t> sightings;
};

// Its device copy (far rows in pinned host memory).
struct DeviceImage {
  explicit DeviceImage(const HostImage& h)
      : keys(h.keys), scores(h.scores), digests(h.digests), rows(h.rows), far_rows(h.far_rows), counters(h.counters),
        sightings(h.sightings) {}
  portable::TableArrays arrays(const HostImage& h) const {
    portable::TableArrays a{keys.get(), scores.get(), digests.get(), rows.get(), h.buckets, h.capacity, h.width};
    a.far_rows = far_rows.get();
    a.near_slots = h.near_slots;
    return a;
  }
  DeviceArray<std::uint64_t> keys, scores;
  DeviceArray<std::uint8_t> digests;
  DeviceArray<float> rows;
  PinnedArray far_rows;
  DeviceArray<std::uint8_t> counters;
  DeviceArray<std::uint32_t> sightings;
};

// The whole table and sketch, device against host, bit for bit.
void check_same_table(const HostImage& h, const DeviceImage& d, const std::string& where) {
  CUDA_OK(cudaDeviceSynchronize());
  CHECK(same_bits(d.keys.download(), h.keys), "%s: keys differ", where.c_str());
  CHECK(same_bits(d.scores.download(), h.scores), "%s: scores differ", where.c_str());
  CHECK(same_bits(d.digests.download(), h.digests), "%s: digests differ", where.c_str());
  CHECK(same_bits(d.rows.download(), h.rows), "%s: rows differ", where.c_str());
  CHECK(same_bits(d.far_rows.download(), h.far_rows), "%s: far rows (hybrid mode) differ", where.c_str());
  CHECK(same_bits(d.counters.download(), h.counters), "%s: sketch counters differ", where.c_str());
  CHECK(same_bits(d.sightings.download(), h.sightings), "%s: sketch sightings differ", where.c_str());
}

struct Scenario {
  ScoreStrategy strategy;
  portable::FilterKind filter;
  std::uint32_t bucket_capacity;
  std::uint64_t seed;
  bool hybrid = false;  // the rows of all but the first two buckets in pinned host memory
};

std::string name_of(const Scenario& s) {
  return std::string(embscale::kv::score_rules(s.strategy).name) + "/filter" +
         std::to_string(static_cast<int>(s.filter)) + "/bucket" + std::to_string(s.bucket_capacity) +
         (s.hybrid ? "/hybrid" : "");
}

bool reads_only(BatchOp op) {
  return op == BatchOp::kFind || op == BatchOp::kContains || op == BatchOp::kEvalFindOrInsert;
}

// What a sequence exercised, so that a passing run means something.
struct Seen {
  std::int64_t found = 0, inserted = 0, evicted = 0, refused = 0, not_admitted = 0, duplicates = 0, growths = 0,
               reserved = 0;
};

bool g_quick = false;  // --quick: a few scenarios of fewer calls (for compute-sanitizer)

constexpr std::uint32_t kDim = 3;
constexpr std::uint32_t kWidth = 5;  // dim and two optimizer state values

void run_scenario(const Scenario& sc, Seen& seen) {
  const std::string name = name_of(sc);
  const std::uint64_t max_buckets = 2048 / sc.bucket_capacity;  // 2048 slots at most: eviction happens
  std::uint64_t buckets = max_buckets / 8;
  const std::uint64_t blocks = 1;
  const std::uint64_t near_buckets = sc.hybrid ? 2 : ~std::uint64_t{0};
  HostImage host(buckets, sc.bucket_capacity, kWidth, blocks, near_buckets);
  DeviceImage device(host);
  const std::vector<float> state_init{0.5f, -0.25f};
  DeviceArray<float> device_state_init(state_init);

  std::mt19937_64 rng(sc.seed);
  std::vector<std::uint64_t> space(6000);
  for (std::size_t k = 0; k < space.size(); ++k) space[k] = k * 0x9E3779B97F4A7C15ULL + 11;
  std::uniform_int_distribution<std::size_t> key_of(0, space.size() - 1);
  std::uniform_real_distribution<float> value_of(-2.0f, 2.0f);

  const int calls = g_quick ? 80 : 240;
  for (int call = 0; call < calls; ++call) {
    if (call % 40 == 39 && buckets < max_buckets) {  // growth: a rehash on both sides
      HostImage grown(buckets * 2, sc.bucket_capacity, kWidth, blocks, near_buckets);
      portable::rehash_on_host(host.arrays(), grown.arrays());
      // The sketch's banks grow as the CPU table's do: each new bank copies its parent's.
      for (std::uint64_t b = 0; b < grown.buckets; ++b) {
        const std::uint64_t parent = b & (buckets - 1);
        std::memcpy(&grown.counters[b * blocks * 64], &host.counters[parent * blocks * 64], blocks * 64);
        grown.sightings[b] = host.sightings[parent];
      }
      DeviceImage grown_device(HostImage(buckets * 2, sc.bucket_capacity, kWidth, blocks, near_buckets));
      grown_device.counters.upload(grown.counters);
      grown_device.sightings.upload(grown.sightings);
      const portable::TableArrays from = device.arrays(host), to = grown_device.arrays(grown);
      ABI_OK(embscale_cuda_kv_table_rehash(&from, &to, nullptr));
      CUDA_OK(cudaDeviceSynchronize());
      host = std::move(grown);
      device = std::move(grown_device);
      buckets *= 2;
      ++seen.growths;
      check_same_table(host, device, name + " after growth to " + std::to_string(buckets) + " buckets");
    }
    const auto op = static_cast<BatchOp>(rng() % 11);
    const std::size_t n = 1 + rng() % 200;
    std::vector<std::uint64_t> keys(n), scores_in(n);
    std::vector<float> rows_in(n * kWidth);
    std::vector<std::uint8_t> accumulate(n);
    for (auto& k : keys) k = space[key_of(rng)];
    for (std::size_t i = 1; i < n; i += 7) keys[i] = keys[rng() % i];  // duplicates in the batch
    seen.duplicates += static_cast<std::int64_t>(n / 7);
    // Now and then a reserved key (a batch already on the device is not checked on the host): it
    // is left alone and reported (kKeyReserved), on both sides.
    if (call % 13 == 12) keys[rng() % n] = portable::kFirstReserved + rng() % 3;
    for (auto& v : rows_in) v = value_of(rng);
    for (auto& s : scores_in) s = rng() % 300;
    for (auto& a : accumulate) a = static_cast<std::uint8_t>(rng() % 2);
    const bool caller_scores = op == BatchOp::kRestore || op == BatchOp::kAssignScores ||
                               (sc.strategy == ScoreStrategy::kCustomized && rng() % 2);

    portable::TableState hs;
    hs.arrays = host.arrays();
    hs.rules = embscale::kv::score_rules(sc.strategy);
    hs.call_score = 1000 + static_cast<std::uint64_t>(call) * 7;
    hs.epoch_high = std::uint64_t{static_cast<std::uint32_t>(call / 80)} << 32;
    hs.filter = sc.filter;
    hs.threshold_k = 2;
    hs.sketch.counters = host.counters.data();
    hs.sketch.sightings = host.sightings.data();
    hs.sketch.buckets = buckets;
    hs.sketch.blocks = blocks;
    hs.sketch.depth = 4;
    hs.sketch.per_row = 16;
    hs.sketch.max_count = 15;
    hs.sketch.period = 3 * sc.bucket_capacity;  // aging within the run
    hs.sketch.salt = 0x1234567;
    hs.initializer.mode = op == BatchOp::kEvalFindOrInsert ? InitializerMode::kConstant : InitializerMode::kUniform;
    hs.initializer.lower = -0.05;
    hs.initializer.upper = 0.05;
    hs.initializer.dim = kDim;
    hs.initializer.seed = sc.seed;
    hs.initializer.initial_state = state_init.data();
    hs.initializer.state_size = static_cast<std::uint32_t>(state_init.size());
    portable::TableState ds = hs;
    ds.arrays = device.arrays(host);
    ds.sketch.counters = device.counters.get();
    ds.sketch.sightings = device.sightings.get();
    ds.initializer.initial_state = device_state_init.get();
    if (sc.filter == portable::FilterKind::kNone) hs.sketch.counters = ds.sketch.counters = nullptr;

    // Host: grouped by the stable sort, run on this thread.
    std::vector<float> host_rows_out(n * kWidth, -9.0f);
    std::vector<std::uint64_t> host_scores_out(n, 7), host_evicted_keys(n, 0), host_evicted_scores(n, 0);
    std::vector<float> host_evicted_rows(n * kWidth, 0.0f);
    std::vector<std::uint8_t> host_outcomes(n, 0xff);
    portable::BatchRef hb;
    hb.op = op;
    hb.size = n;
    hb.keys = keys.data();
    hb.rows_in = rows_in.data();
    hb.rows_out = host_rows_out.data();
    hb.scores_in = caller_scores ? scores_in.data() : nullptr;
    hb.scores_out = host_scores_out.data();
    hb.accumulate = accumulate.data();
    hb.outcomes = host_outcomes.data();
    hb.evicted_keys = host_evicted_keys.data();
    hb.evicted_scores = host_evicted_scores.data();
    hb.evicted_rows = host_evicted_rows.data();
    const portable::BucketGroups groups = portable::group_by_bucket(keys, buckets);
    if (!reads_only(op)) {
      hb.order = groups.order.data();
      hb.offsets = groups.offsets.data();
      hb.groups = groups.groups();
    }
    portable::run_batch_on_host(hs, hb);

    // Device: grouped by the radix sort, one tile per group.
    DeviceArray<std::uint64_t> d_keys(keys), d_scores_in(scores_in), d_scores_out(std::vector<std::uint64_t>(n, 7));
    DeviceArray<float> d_rows_in(rows_in), d_rows_out(std::vector<float>(n * kWidth, -9.0f));
    DeviceArray<std::uint8_t> d_accumulate(accumulate), d_outcomes(std::vector<std::uint8_t>(n, 0xff));
    DeviceArray<std::uint64_t> d_evicted_keys(std::vector<std::uint64_t>(n, 0)),
        d_evicted_scores(std::vector<std::uint64_t>(n, 0));
    DeviceArray<float> d_evicted_rows(std::vector<float>(n * kWidth, 0.0f));
    DeviceArray<std::uint32_t> d_order(n), d_offsets(n + 1);
    DeviceArray<std::uint64_t> d_groups(1);
    std::uint64_t scratch_bytes = 0;
    ABI_OK(embscale_cuda_kv_table_group_scratch(n, &scratch_bytes));
    DeviceArray<unsigned char> scratch(scratch_bytes);
    portable::BatchRef db = hb;
    db.keys = d_keys.get();
    db.rows_in = d_rows_in.get();
    db.rows_out = d_rows_out.get();
    db.scores_in = caller_scores ? d_scores_in.get() : nullptr;
    db.scores_out = d_scores_out.get();
    db.accumulate = d_accumulate.get();
    db.outcomes = d_outcomes.get();
    db.evicted_keys = d_evicted_keys.get();
    db.evicted_scores = d_evicted_scores.get();
    db.evicted_rows = d_evicted_rows.get();
    db.order = nullptr;
    db.offsets = nullptr;
    db.groups = 0;
    if (!reads_only(op)) {
      ABI_OK(embscale_cuda_kv_table_group(d_keys.get(), n, buckets, d_order.get(), d_offsets.get(), d_groups.get(),
                                          scratch.get(), scratch_bytes, nullptr));
      db.order = d_order.get();
      db.offsets = d_offsets.get();
      db.group_count = d_groups.get();
      db.groups = n;
    }
    ABI_OK(embscale_cuda_kv_table_run(&ds, &db, nullptr));
    CUDA_OK(cudaDeviceSynchronize());

    const std::string where = name + " call " + std::to_string(call) + " op " + std::to_string(static_cast<int>(op));
    if (!reads_only(op)) {
      CHECK(d_groups.download()[0] == groups.groups(), "%s: group count", where.c_str());
      CHECK(same_bits(d_order.download(), groups.order), "%s: grouping order", where.c_str());
    }
    const auto outcomes = d_outcomes.download();
    CHECK(same_bits(outcomes, host_outcomes), "%s: outcomes differ", where.c_str());
    CHECK(same_bits(d_rows_out.download(), host_rows_out), "%s: returned rows differ", where.c_str());
    CHECK(same_bits(d_scores_out.download(), host_scores_out), "%s: returned scores differ", where.c_str());
    CHECK(same_bits(d_evicted_keys.download(), host_evicted_keys), "%s: evicted keys differ", where.c_str());
    CHECK(same_bits(d_evicted_scores.download(), host_evicted_scores), "%s: evicted scores differ", where.c_str());
    CHECK(same_bits(d_evicted_rows.download(), host_evicted_rows), "%s: evicted rows differ", where.c_str());
    for (const std::uint8_t o : host_outcomes) {
      seen.found += (o & portable::kKeyFound) != 0;
      seen.inserted += (o & portable::kKeyInserted) != 0;
      seen.evicted += (o & portable::kKeyEvicted) != 0;
      seen.refused += (o & portable::kKeyRefused) != 0;
      seen.not_admitted += (o & portable::kKeyNotAdmitted) != 0;
      seen.reserved += (o & portable::kKeyReserved) != 0;
    }
    if (call % 10 == 9 || embscale::gpu_check::g_failures > 0) check_same_table(host, device, where);
    if (embscale::gpu_check::g_failures > 0) return;  // the first difference says enough
  }
  check_same_table(host, device, name + " at the end");
}

void check_sequences() {
  Seen seen, filtered;
  std::uint64_t seed = 20261128;
  for (const std::uint32_t capacity : {16u, 128u})
    for (const ScoreStrategy strategy : embscale::kv::kScoreStrategies)
      for (const portable::FilterKind filter :
           {portable::FilterKind::kNone, portable::FilterKind::kKCount, portable::FilterKind::kTinyLfu}) {
        // FREQUENCY's new keys score the filter's estimate: it needs a filter.
        if (strategy == ScoreStrategy::kFrequency && filter == portable::FilterKind::kNone) continue;
        // Quick: STEP without a filter, LFU with TinyLFU, FREQUENCY with k-count.
        const bool in_quick = (strategy == ScoreStrategy::kStep && filter == portable::FilterKind::kNone) ||
                              (strategy == ScoreStrategy::kLfu && filter == portable::FilterKind::kTinyLfu) ||
                              (strategy == ScoreStrategy::kFrequency && filter == portable::FilterKind::kKCount);
        if (g_quick && !in_quick) continue;
        run_scenario({strategy, filter, capacity, seed++}, filter == portable::FilterKind::kNone ? seen : filtered);
        if (embscale::gpu_check::g_failures > 0) return;
      }
  std::printf(
      "sequences: %lld found, %lld inserted, %lld evicted, %lld refused, %lld not admitted, %lld growths\n",
      static_cast<long long>(seen.found + filtered.found), static_cast<long long>(seen.inserted + filtered.inserted),
      static_cast<long long>(seen.evicted + filtered.evicted), static_cast<long long>(seen.refused + filtered.refused),
      static_cast<long long>(filtered.not_admitted), static_cast<long long>(seen.growths + filtered.growths));
  CHECK(
      seen.evicted + filtered.evicted > 0 && seen.refused + filtered.refused > 0 && seen.found > 0 && seen.growths > 0,
      "the sequences must evict, refuse, find and grow");
  CHECK(filtered.not_admitted > 0, "the filters must keep some newcomers out");
  CHECK(seen.reserved + filtered.reserved > 0, "the sequences must meet reserved keys");
  CHECK(seen.not_admitted == 0, "no filter, no refusal by it");
}

// The family's export (a stable selection by score on the device, then a gather) against the
// host's selection of the same slots, for ranges that cut buckets and thresholds that keep all,
// some or none of the entries.
void check_exports(HostImage& host, const DeviceImage& device) {
  const portable::TableArrays h = host.arrays(), d = device.arrays(host);
  const std::uint64_t slots = host.buckets * host.capacity;
  const struct {
    std::uint64_t first, end, min_score;
  } cases[] = {{0, slots, 0}, {0, slots, 3}, {1000, 70000, 2}, {slots - 5, slots, 0}, {77, 77, 0}, {0, slots, ~0ull}};
  for (const auto& c : cases) {
    std::vector<std::uint64_t> want_keys, want_scores;
    std::vector<float> want_rows;
    for (std::uint64_t slot = c.first; slot < c.end; ++slot) {
      if (!portable::holds_key(h.keys[slot]) || h.scores[slot] < c.min_score) continue;
      want_keys.push_back(h.keys[slot]);
      want_scores.push_back(h.scores[slot]);
      const float* row = portable::row_of(h, slot);
      want_rows.insert(want_rows.end(), row, row + h.row_width);
    }
    const std::uint64_t n = c.end - c.first;
    std::uint64_t bytes = 0;
    ABI_OK(embscale_cuda_kv_table_export_scratch(n, &bytes));
    DeviceArray<unsigned char> scratch(bytes ? bytes : 1);
    DeviceArray<std::uint64_t> keys(n ? n : 1), scores(n ? n : 1), count(1);
    DeviceArray<float> rows((n ? n : 1) * h.row_width);
    ABI_OK(embscale_cuda_kv_table_export(&d, c.first, c.end, c.min_score, keys.get(), scores.get(), rows.get(),
                                         count.get(), scratch.get(), bytes, nullptr));
    CUDA_OK(cudaDeviceSynchronize());
    const std::uint64_t got = count.download()[0];
    const std::string where = "export [" + std::to_string(c.first) + ", " + std::to_string(c.end) +
                              ") score >= " + std::to_string(c.min_score);
    CHECK(got == want_keys.size(), "%s: %llu entries, host %zu", where.c_str(), static_cast<unsigned long long>(got),
          want_keys.size());
    if (got != want_keys.size()) continue;
    auto got_keys = keys.download(), got_scores = scores.download();
    auto got_rows = rows.download();
    got_keys.resize(got);
    got_scores.resize(got);
    got_rows.resize(got * h.row_width);
    CHECK(same_bits(got_keys, want_keys) && same_bits(got_scores, want_scores) && same_bits(got_rows, want_rows),
          "%s: entries differ", where.c_str());
  }
}

// Large batches: 2^20 keys over 4096 buckets of 128 slots (so a tile runs many groups, groups of
// about 256 keys with hot keys repeated, every bucket full and evicting), an upsert, a
// find_or_insert with an admission filter's sightings and a find, device against host; then
// exports. Hybrid: the rows of all but the first 1000 buckets in pinned host memory.
void check_large_batches(bool hybrid) {
  const std::uint64_t buckets = 4096, n = 1ull << 20;
  const std::uint32_t width = 8;
  HostImage host(buckets, 128, width, 2, hybrid ? 1000 : ~std::uint64_t{0});
  DeviceImage device(host);
  std::mt19937_64 rng(2026);
  std::vector<std::uint64_t> keys(n);
  for (auto& k : keys) k = rng() % 8 == 0 ? rng() % 512 : rng() % (1ull << 21);  // an eighth hot
  std::vector<float> rows_in(n * width);
  for (auto& v : rows_in) v = static_cast<float>(rng() % 1000) / 1000.0f;
  const portable::BucketGroups groups = portable::group_by_bucket(keys, buckets);
  DeviceArray<std::uint64_t> d_keys(keys);
  DeviceArray<float> d_rows_in(rows_in);
  DeviceArray<std::uint32_t> d_order(n), d_offsets(n + 1);
  DeviceArray<std::uint64_t> d_groups(1);
  std::uint64_t bytes = 0;
  ABI_OK(embscale_cuda_kv_table_group_scratch(n, &bytes));
  DeviceArray<unsigned char> scratch(bytes);
  ABI_OK(embscale_cuda_kv_table_group(d_keys.get(), n, buckets, d_order.get(), d_offsets.get(), d_groups.get(),
                                      scratch.get(), bytes, nullptr));
  for (const BatchOp op : {BatchOp::kUpsert, BatchOp::kFindOrInsert, BatchOp::kFind}) {
    portable::TableState hs;
    hs.arrays = host.arrays();
    hs.rules = embscale::kv::score_rules(ScoreStrategy::kLfu);
    hs.filter = portable::FilterKind::kTinyLfu;
    hs.sketch.counters = host.counters.data();
    hs.sketch.sightings = host.sightings.data();
    hs.sketch.buckets = buckets;
    hs.sketch.blocks = 2;
    hs.sketch.depth = 4;
    hs.sketch.per_row = 16;
    hs.sketch.max_count = 15;
    hs.sketch.period = 1280;
    hs.sketch.salt = 99;
    hs.initializer.lower = -0.1;
    hs.initializer.upper = 0.1;
    hs.initializer.dim = width;
    portable::TableState ds = hs;
    ds.arrays = device.arrays(host);
    ds.sketch.counters = device.counters.get();
    ds.sketch.sightings = device.sightings.get();
    std::vector<float> host_out(n * width, -9.0f);
    std::vector<std::uint8_t> host_outcomes(n, 0xff);
    portable::BatchRef hb;
    hb.op = op;
    hb.size = n;
    hb.keys = keys.data();
    hb.rows_in = rows_in.data();
    hb.rows_out = host_out.data();
    hb.outcomes = host_outcomes.data();
    if (op != BatchOp::kFind) {
      hb.order = groups.order.data();
      hb.offsets = groups.offsets.data();
      hb.groups = groups.groups();
    }
    portable::run_batch_on_host(hs, hb);
    DeviceArray<float> d_out(std::vector<float>(n * width, -9.0f));
    DeviceArray<std::uint8_t> d_outcomes(n);
    portable::BatchRef db = hb;
    db.keys = d_keys.get();
    db.rows_in = d_rows_in.get();
    db.rows_out = d_out.get();
    db.outcomes = d_outcomes.get();
    if (op != BatchOp::kFind) {
      db.order = d_order.get();
      db.offsets = d_offsets.get();
      db.group_count = d_groups.get();
      db.groups = n;
    }
    ABI_OK(embscale_cuda_kv_table_run(&ds, &db, nullptr));
    CUDA_OK(cudaDeviceSynchronize());
    const std::string where =
        std::string(hybrid ? "hybrid " : "") + "large batch op " + std::to_string(static_cast<int>(op));
    CHECK(same_bits(d_outcomes.download(), host_outcomes), "%s: outcomes differ", where.c_str());
    CHECK(same_bits(d_out.download(), host_out), "%s: returned rows differ", where.c_str());
    check_same_table(host, device, where);
    std::size_t evicted = 0;
    for (const std::uint8_t o : host_outcomes) evicted += (o & portable::kKeyEvicted) != 0;
    if (op == BatchOp::kUpsert) CHECK(evicted > 0, "%s: the large upsert must evict", where.c_str());
  }
  check_exports(host, device);
}

// The grouping alone on large batches (many groups, heavy duplicates): the device's order and
// offsets equal the host's stable sort.
void check_large_grouping() {
  std::mt19937_64 rng(99);
  for (const std::uint64_t n : {1ull, 1000ull, 1ull << 20}) {
    for (const std::uint64_t buckets : {1ull, 64ull, 1ull << 18}) {
      std::vector<std::uint64_t> keys(n);
      for (auto& k : keys) k = rng() % (n / 2 + 1);  // about half the keys repeat
      const portable::BucketGroups want = portable::group_by_bucket(keys, buckets);
      DeviceArray<std::uint64_t> d_keys(keys);
      DeviceArray<std::uint32_t> d_order(n), d_offsets(n + 1);
      DeviceArray<std::uint64_t> d_groups(1);
      std::uint64_t bytes = 0;
      ABI_OK(embscale_cuda_kv_table_group_scratch(n, &bytes));
      DeviceArray<unsigned char> scratch(bytes);
      ABI_OK(embscale_cuda_kv_table_group(d_keys.get(), n, buckets, d_order.get(), d_offsets.get(), d_groups.get(),
                                          scratch.get(), bytes, nullptr));
      const std::uint64_t groups = d_groups.download()[0];
      CHECK(groups == want.groups(), "n %llu buckets %llu: %llu groups, host %llu", static_cast<unsigned long long>(n),
            static_cast<unsigned long long>(buckets), static_cast<unsigned long long>(groups),
            static_cast<unsigned long long>(want.groups()));
      CHECK(same_bits(d_order.download(), want.order), "n %llu buckets %llu: order differs",
            static_cast<unsigned long long>(n), static_cast<unsigned long long>(buckets));
      auto offsets = d_offsets.download();
      offsets.resize(groups + 1 <= offsets.size() ? groups + 1 : offsets.size());
      CHECK(same_bits(offsets, want.offsets), "n %llu buckets %llu: offsets differ", static_cast<unsigned long long>(n),
            static_cast<unsigned long long>(buckets));
    }
  }
}

// NORMAL and TRUNCATED_NORMAL rows of new keys: within one float ulp of the host's (the device's
// log, cos and erfc are not the host's); UNIFORM is exact (the sequences above compare it).
void check_normal_initializers() {
  for (const InitializerMode mode : {InitializerMode::kNormal, InitializerMode::kTruncatedNormal}) {
    HostImage host(256, 32, 16, 1);
    DeviceImage device(host);
    const std::size_t n = 4000;
    std::vector<std::uint64_t> keys(n);
    for (std::size_t i = 0; i < n; ++i) keys[i] = i * 2654435761ULL;
    portable::TableState hs;
    hs.arrays = host.arrays();
    hs.rules = embscale::kv::score_rules(ScoreStrategy::kStep);
    hs.call_score = 1;
    hs.initializer.mode = mode;
    hs.initializer.mean = 0.1;
    hs.initializer.std_dev = 0.5;
    hs.initializer.lower = -0.4;
    hs.initializer.upper = 0.7;
    hs.initializer.dim = 16;
    hs.initializer.seed = 5;
    portable::TableState ds = hs;
    ds.arrays = device.arrays(host);
    std::vector<float> host_out(n * 16);
    std::vector<std::uint8_t> host_outcomes(n);
    const portable::BucketGroups groups = portable::group_by_bucket(keys, host.buckets);
    portable::BatchRef hb;
    hb.op = BatchOp::kFindOrInsert;
    hb.size = n;
    hb.keys = keys.data();
    hb.rows_out = host_out.data();
    hb.outcomes = host_outcomes.data();
    hb.order = groups.order.data();
    hb.offsets = groups.offsets.data();
    hb.groups = groups.groups();
    portable::run_batch_on_host(hs, hb);
    DeviceArray<std::uint64_t> d_keys(keys);
    DeviceArray<float> d_out(n * 16);
    DeviceArray<std::uint8_t> d_outcomes(n);
    DeviceArray<std::uint32_t> d_order(groups.order), d_offsets(groups.offsets);
    portable::BatchRef db = hb;
    db.keys = d_keys.get();
    db.rows_out = d_out.get();
    db.outcomes = d_outcomes.get();
    db.order = d_order.get();
    db.offsets = d_offsets.get();
    ABI_OK(embscale_cuda_kv_table_run(&ds, &db, nullptr));
    CUDA_OK(cudaDeviceSynchronize());
    const auto out = d_out.download();
    std::size_t exact = 0, one_ulp = 0, worse = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i] == host_out[i]) ++exact;
      else if (std::nextafter(host_out[i], out[i]) == out[i]) ++one_ulp;
      else ++worse;
    }
    std::printf("initializer %s: %zu of %zu values exact, %zu one float ulp apart, %zu further\n",
                mode == InitializerMode::kNormal ? "NORMAL" : "TRUNCATED_NORMAL", exact, out.size(), one_ulp, worse);
    CHECK(worse == 0, "initializer values more than one float ulp from the host's");
    CHECK(same_bits(d_outcomes.download(), host_outcomes), "outcomes differ");
  }
}

void check_layout() {
  std::uint64_t arrays = 0, state = 0, batch = 0;
  ABI_OK(embscale_cuda_kv_table_layout(&arrays, &state, &batch));
  CHECK(arrays == sizeof(portable::TableArrays) && state == sizeof(portable::TableState) &&
            batch == sizeof(portable::BatchRef),
        "the library's structures (%llu, %llu, %llu bytes) are not this build's",
        static_cast<unsigned long long>(arrays), static_cast<unsigned long long>(state),
        static_cast<unsigned long long>(batch));
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--quick") {
      g_quick = true;
    } else {
      std::printf("usage: %s [--quick]\n", argv[0]);
      return 2;
    }
  }
  if (embscale::gpu_check::no_gpu()) return 77;
  check_layout();
  check_large_grouping();
  if (!g_quick) {
    check_large_batches(false);
    check_large_batches(true);
  }
  check_sequences();
  check_normal_initializers();
  if (embscale::gpu_check::g_failures > 0) {
    std::printf("%d of %d checks FAILED\n", embscale::gpu_check::g_failures, embscale::gpu_check::g_checks);
    return 1;
  }
  std::printf("PASS: %d checks (the GPU table's calls equal the portable code on the host, bit for bit)\n",
              embscale::gpu_check::g_checks);
  return 0;
}
