// embscale_gpu_bucket_tests: the KV table's bucket logic (lib/kv/portable/bucket_ref.hpp) on the
// device, through DeviceTile and DeviceAtomics (kernels/device_tile.cuh), held to the same
// source run on the host (HostTile, HostAtomics: tests/kv/bucket_ref_test.cpp checks that one
// against brute-force oracles). Random inputs, fixed seeds; tiles of 8 and 32 lanes.
//   * many warps claiming distinct keys in one bucket at once: every slot holds one key, none is
//     placed twice or lost, and each key is then found where its warp put it;
//   * the victim of random buckets (lowest score, ties by the smallest key): equal to the host's;
//   * a sequence of insert_or_evict by one tile: every placement, victim and the final bucket
//     equal to the host's;
//   * the score rules (kv/score_rules.hpp, the CPU table's one rule table, constexpr) computed on
//     the device for every strategy: the same scores as on the host, so that both tables follow
//     one source;
//   * the table's per-key operations (kv/portable/table_ref.hpp): a batch of distinct keys, one
//     tile each, all at once (every key held once, found with its row), and sequences by one
//     tile (insert_or_assign with evictions, then accum_or_assign) equal to the host's, arrays
//     and evicted rows alike.
// Standalone (cudart only, no GoogleTest): scripts/gpu-check builds it with nvcc on a GPU
// machine. Without a usable GPU it prints SKIP and exits 77 (ctest SKIP_RETURN_CODE).
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "core/hash.hpp"
#include "device_tile.cuh"
#include "gpu_check.hpp"
#include "kv/portable/atomics.hpp"
#include "kv/portable/bucket_ref.hpp"
#include "kv/portable/table_ref.hpp"
#include "kv/score_rules.hpp"

namespace {

using namespace embscale::kv::portable;
namespace cg = cooperative_groups;

using embscale::gpu_check::g_checks;
using embscale::gpu_check::g_failures;

// core/hash.hpp's mix64 (constexpr, so callable on the device with --expt-relaxed-constexpr), for
// the digests and probe starts of both sides.
__host__ __device__ std::uint64_t mix(std::uint64_t x) { return embscale::mix64(x); }
__host__ __device__ std::uint8_t digest_of(std::uint64_t key) { return static_cast<std::uint8_t>(mix(key) >> 56); }

// Device arrays of `buckets` buckets of `capacity` slots, and their host copies.
struct Buckets {
  Buckets(std::uint32_t count, std::uint32_t slots) : buckets(count), capacity(slots) {
    const std::size_t n = std::size_t{count} * slots;
    host_keys.assign(n, kEmptyKey);
    host_scores.assign(n, 0);
    host_digests.assign(n, 0);
    CUDA_OK(cudaMalloc(&keys, n * sizeof(std::uint64_t)));
    CUDA_OK(cudaMalloc(&scores, n * sizeof(std::uint64_t)));
    CUDA_OK(cudaMalloc(&digests, n));
    to_device();
  }
  ~Buckets() {
    cudaFree(keys);
    cudaFree(scores);
    cudaFree(digests);
  }
  Buckets(const Buckets&) = delete;
  Buckets& operator=(const Buckets&) = delete;
  void to_device() {
    CUDA_OK(cudaMemcpy(keys, host_keys.data(), host_keys.size() * 8, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(scores, host_scores.data(), host_scores.size() * 8, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(digests, host_digests.data(), host_digests.size(), cudaMemcpyHostToDevice));
  }
  void to_host() {
    CUDA_OK(cudaMemcpy(host_keys.data(), keys, host_keys.size() * 8, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(host_scores.data(), scores, host_scores.size() * 8, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(host_digests.data(), digests, host_digests.size(), cudaMemcpyDeviceToHost));
  }
  std::uint32_t buckets, capacity;
  std::uint64_t* keys = nullptr;
  std::uint64_t* scores = nullptr;
  std::uint8_t* digests = nullptr;
  std::vector<std::uint64_t> host_keys, host_scores;
  std::vector<std::uint8_t> host_digests;
};

template <class T> T* device_copy(const std::vector<T>& values) {
  T* out = nullptr;
  CUDA_OK(cudaMalloc(&out, values.size() * sizeof(T)));
  CUDA_OK(cudaMemcpy(out, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice));
  return out;
}

template <class T> std::vector<T> host_copy(const T* values, std::size_t n) {
  std::vector<T> out(n);
  CUDA_OK(cudaMemcpy(out.data(), values, n * sizeof(T), cudaMemcpyDeviceToHost));
  return out;
}

// Tile t of the grid: which of the launch's tiles this thread's lanes form.
template <unsigned N> __device__ DeviceTile<N> my_tile(std::uint32_t& index) {
  const auto block = cg::this_thread_block();
  const auto tile = cg::tiled_partition<N>(block);
  index = (blockIdx.x * blockDim.x + threadIdx.x) / N;
  return DeviceTile<N>(tile);
}

template <unsigned N>
__global__ void claim_then_find(std::uint64_t* keys, std::uint64_t* scores, std::uint8_t* digests,
                                std::uint32_t capacity, const std::uint64_t* input, std::uint32_t n,
                                std::uint32_t* claimed, std::uint32_t* found) {
  std::uint32_t t = 0;
  const DeviceTile<N> tile = my_tile<N>(t);
  if (t >= n) return;
  BucketRef<DeviceTile<N>, DeviceAtomics> ref(keys, scores, digests, capacity);
  const std::uint64_t key = input[t];
  const std::uint32_t start = ref.probe_start(mix(key));
  const std::uint32_t slot = ref.claim_free(tile, key, digest_of(key), t, start);
  if (tile.lane() == 0) claimed[t] = slot;
  tile.group.sync();
  // The key this tile placed is found there (another tile's claim may still be running: a key
  // placed before the first empty slot of its probe stays reachable).
  const std::uint32_t where = ref.find(tile, key, digest_of(key), start);
  if (tile.lane() == 0) found[t] = where;
}

template <unsigned N> void check_concurrent_claims() {
  constexpr std::uint32_t kCapacity = 128, kKeys = 1000;  // far more keys than slots, one bucket
  std::mt19937_64 random(N);
  std::vector<std::uint64_t> keys;
  std::set<std::uint64_t> distinct;
  while (keys.size() < kKeys) {
    const std::uint64_t k = random() % (kFirstReserved - 1);
    if (distinct.insert(k).second) keys.push_back(k);
  }
  Buckets bucket(1, kCapacity);
  std::uint64_t* input = device_copy(keys);
  std::uint32_t *claimed = nullptr, *found = nullptr;
  CUDA_OK(cudaMalloc(&claimed, kKeys * 4));
  CUDA_OK(cudaMalloc(&found, kKeys * 4));
  const unsigned threads = 128;
  claim_then_find<N><<<(kKeys * N + threads - 1) / threads, threads>>>(bucket.keys, bucket.scores, bucket.digests,
                                                                       kCapacity, input, kKeys, claimed, found);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  bucket.to_host();
  const auto slots = host_copy(claimed, kKeys);
  const auto where = host_copy(found, kKeys);
  std::set<std::uint64_t> held;
  for (std::uint32_t s = 0; s < kCapacity; ++s) {
    CHECK(holds_key(bucket.host_keys[s]), "tile %u: slot %u free with keys refused", N, s);
    CHECK(held.insert(bucket.host_keys[s]).second, "tile %u: a key placed twice", N);
  }
  std::uint32_t placed = 0;
  for (std::uint32_t k = 0; k < kKeys; ++k) {
    if (slots[k] == kNoSlot) {
      CHECK(held.count(keys[k]) == 0, "tile %u: a refused key is in the bucket", N);
      continue;
    }
    ++placed;
    CHECK(bucket.host_keys[slots[k]] == keys[k] && bucket.host_digests[slots[k]] == digest_of(keys[k]) &&
              bucket.host_scores[slots[k]] == k,
          "tile %u: key %u's slot %u holds another key, digest or score", N, k, slots[k]);
    CHECK(where[k] == slots[k], "tile %u: key %u found at %u, placed at %u", N, k, where[k], slots[k]);
  }
  CHECK(placed == kCapacity, "tile %u: %u keys told placed in %u slots", N, placed, kCapacity);
  cudaFree(input);
  cudaFree(claimed);
  cudaFree(found);
}

template <unsigned N>
__global__ void lowest_of_each(std::uint64_t* keys, std::uint64_t* scores, std::uint8_t* digests,
                               std::uint32_t capacity, std::uint32_t buckets, Victim* out) {
  std::uint32_t b = 0;
  const DeviceTile<N> tile = my_tile<N>(b);
  if (b >= buckets) return;
  const std::size_t at = std::size_t{b} * capacity;
  BucketRef<DeviceTile<N>, DeviceAtomics> ref(keys + at, scores + at, digests + at, capacity);
  const Victim v = ref.lowest(tile);
  if (tile.lane() == 0) out[b] = v;
}

template <unsigned N> void check_victims() {
  constexpr std::uint32_t kBuckets = 512, kCapacity = 128;
  Buckets all(kBuckets, kCapacity);
  std::mt19937_64 random(100 + N);
  for (std::size_t s = 0; s < all.host_keys.size(); ++s) {
    const auto roll = random() % 10;
    all.host_keys[s] = roll == 0 ? kEmptyKey : roll == 1 ? kReclaimedKey : random() % 1000000;
    all.host_scores[s] = random() % 5;  // ties are common
  }
  all.to_device();
  Victim* out = nullptr;
  CUDA_OK(cudaMalloc(&out, kBuckets * sizeof(Victim)));
  lowest_of_each<N><<<(kBuckets * N + 127) / 128, 128>>>(all.keys, all.scores, all.digests, kCapacity, kBuckets, out);
  CUDA_OK(cudaGetLastError());
  const auto got = host_copy(out, kBuckets);
  const HostTile<N> host_tile;
  for (std::uint32_t b = 0; b < kBuckets; ++b) {
    const std::size_t at = std::size_t{b} * kCapacity;
    BucketRef<HostTile<N>, HostAtomics> ref(all.host_keys.data() + at, all.host_scores.data() + at,
                                            all.host_digests.data() + at, kCapacity);
    const Victim want = ref.lowest(host_tile);
    CHECK(got[b].slot == want.slot && got[b].key == want.key && got[b].score == want.score,
          "tile %u, bucket %u: device victim (%u, %llu, %llu), host (%u, %llu, %llu)", N, b, got[b].slot,
          static_cast<unsigned long long>(got[b].key), static_cast<unsigned long long>(got[b].score), want.slot,
          static_cast<unsigned long long>(want.key), static_cast<unsigned long long>(want.score));
  }
  cudaFree(out);
}

template <unsigned N>
__global__ void place_in_order(std::uint64_t* keys, std::uint64_t* scores, std::uint8_t* digests,
                               std::uint32_t capacity, const std::uint64_t* input, const std::uint64_t* input_scores,
                               std::uint32_t n, PlacementResult* out) {
  std::uint32_t t = 0;
  const DeviceTile<N> tile = my_tile<N>(t);
  if (t != 0) return;  // one tile, the keys in input order
  BucketRef<DeviceTile<N>, DeviceAtomics> ref(keys, scores, digests, capacity);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint64_t key = input[i];
    const PlacementResult r =
        ref.insert_or_evict(tile, key, digest_of(key), input_scores[i], ref.probe_start(mix(key)));
    if (tile.lane() == 0) out[i] = r;
  }
}

template <unsigned N> void check_placements() {
  constexpr std::uint32_t kCapacity = 64, kSteps = 3000;
  std::mt19937_64 random(200 + N);
  std::vector<std::uint64_t> keys(kSteps), scores(kSteps);
  for (std::uint32_t i = 0; i < kSteps; ++i) {
    keys[i] = random() % 300;
    scores[i] = random() % 60;
  }
  Buckets device(1, kCapacity);
  std::uint64_t* input = device_copy(keys);
  std::uint64_t* input_scores = device_copy(scores);
  PlacementResult* out = nullptr;
  CUDA_OK(cudaMalloc(&out, kSteps * sizeof(PlacementResult)));
  place_in_order<N><<<1, N>>>(device.keys, device.scores, device.digests, kCapacity, input, input_scores, kSteps, out);
  CUDA_OK(cudaGetLastError());
  const auto got = host_copy(out, kSteps);
  device.to_host();
  Buckets host(1, kCapacity);
  const HostTile<N> host_tile;
  BucketRef<HostTile<N>, HostAtomics> ref(host.host_keys.data(), host.host_scores.data(), host.host_digests.data(),
                                          kCapacity);
  int differ = 0;
  for (std::uint32_t i = 0; i < kSteps; ++i) {
    const PlacementResult want =
        ref.insert_or_evict(host_tile, keys[i], digest_of(keys[i]), scores[i], ref.probe_start(mix(keys[i])));
    const bool same = got[i].placement == want.placement && got[i].slot == want.slot &&
                      got[i].victim.key == want.victim.key && got[i].victim.score == want.victim.score;
    if (!same && differ++ < 5)
      CHECK(same, "tile %u, step %u: device placement %d slot %u, host %d slot %u", N, i,
            static_cast<int>(got[i].placement), got[i].slot, static_cast<int>(want.placement), want.slot);
  }
  CHECK(differ == 0, "tile %u: %d of %u placements differ", N, differ, kSteps);
  CHECK(device.host_keys == host.host_keys && device.host_scores == host.host_scores &&
            device.host_digests == host.host_digests,
        "tile %u: the final buckets differ", N);
  cudaFree(input);
  cudaFree(input_scores);
  cudaFree(out);
}

// Per case i: the score of a new key (the call's score, or the caller's when given) and of a
// present key of score old[i], under `rules`.
__global__ void scores_on_device(embscale::kv::ScoreRules rules, const std::uint64_t* call, const std::uint64_t* old,
                                 const std::uint64_t* epoch_high, std::uint32_t n, std::uint64_t* new_score,
                                 std::uint64_t* present_score) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::optional<std::uint64_t> caller =
      i % 2 ? std::optional<std::uint64_t>(call[i] ^ 0x5555) : std::optional<std::uint64_t>();
  new_score[i] = embscale::kv::new_key_score(rules, call[i], epoch_high[i], caller, static_cast<int>(i % 5));
  present_score[i] = embscale::kv::present_key_score(rules, old[i], new_score[i], epoch_high[i]);
}

void check_score_rules() {
  constexpr std::uint32_t kCases = 4096;
  std::mt19937_64 random(300);
  std::vector<std::uint64_t> call(kCases), old(kCases), epoch(kCases);
  for (std::uint32_t i = 0; i < kCases; ++i) {
    call[i] = random();
    epoch[i] = (random() % 4) << 32;
    // Old scores near the saturation points and of this epoch or another, where the rules branch.
    const std::uint64_t pick = random() % 4;
    old[i] = pick == 0   ? ~std::uint64_t{0}
             : pick == 1 ? (epoch[i] | 0xFFFFFFFFULL)
             : pick == 2 ? (epoch[i] | 7)
                         : random();
  }
  std::uint64_t* d_call = device_copy(call);
  std::uint64_t* d_old = device_copy(old);
  std::uint64_t* d_epoch = device_copy(epoch);
  std::uint64_t *d_new = nullptr, *d_present = nullptr;
  CUDA_OK(cudaMalloc(&d_new, kCases * 8));
  CUDA_OK(cudaMalloc(&d_present, kCases * 8));
  for (const auto& rules : embscale::kv::kScoreRules) {
    scores_on_device<<<(kCases + 127) / 128, 128>>>(rules, d_call, d_old, d_epoch, kCases, d_new, d_present);
    CUDA_OK(cudaGetLastError());
    const auto got_new = host_copy(d_new, kCases);
    const auto got_present = host_copy(d_present, kCases);
    int differ = 0;
    for (std::uint32_t i = 0; i < kCases; ++i) {
      const std::optional<std::uint64_t> caller =
          i % 2 ? std::optional<std::uint64_t>(call[i] ^ 0x5555) : std::optional<std::uint64_t>();
      const std::uint64_t want_new =
          embscale::kv::new_key_score(rules, call[i], epoch[i], caller, static_cast<int>(i % 5));
      const std::uint64_t want_present = embscale::kv::present_key_score(rules, old[i], want_new, epoch[i]);
      differ += got_new[i] != want_new || got_present[i] != want_present;
    }
    CHECK(differ == 0, "%.*s: %d of %u cases score otherwise on the device", static_cast<int>(rules.name.size()),
          rules.name.data(), differ, kCases);
  }
  cudaFree(d_call);
  cudaFree(d_old);
  cudaFree(d_epoch);
  cudaFree(d_new);
  cudaFree(d_present);
}

// A table of `buckets` buckets of `capacity` slots and rows of `width` floats, on the device and
// its host copy.
struct Table {
  Table(std::uint64_t buckets, std::uint32_t capacity, std::uint32_t width)
      : slots(static_cast<std::uint32_t>(buckets), capacity), row_width(width),
        host_rows(std::size_t{buckets} * capacity * width, 0.0f) {
    CUDA_OK(cudaMalloc(&rows, host_rows.size() * sizeof(float)));
    CUDA_OK(cudaMemset(rows, 0, host_rows.size() * sizeof(float)));
  }
  ~Table() { cudaFree(rows); }
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;
  TableArrays device_view() const {
    return TableArrays{slots.keys, slots.scores, slots.digests, rows, slots.buckets, slots.capacity, row_width};
  }
  TableArrays host_view() {
    return TableArrays{slots.host_keys.data(),
                       slots.host_scores.data(),
                       slots.host_digests.data(),
                       host_rows.data(),
                       slots.buckets,
                       slots.capacity,
                       row_width};
  }
  void to_host() {
    slots.to_host();
    CUDA_OK(cudaMemcpy(host_rows.data(), rows, host_rows.size() * sizeof(float), cudaMemcpyDeviceToHost));
  }
  Buckets slots;
  std::uint32_t row_width;
  float* rows = nullptr;
  std::vector<float> host_rows;
};

// Tile t inserts key t with its row (all tiles at once when `one_tile` is false; else tile 0
// every key in order), then finds it.
template <unsigned N>
__global__ void table_upsert(TableArrays arrays, embscale::kv::ScoreRules rules, const std::uint64_t* keys,
                             const float* values, std::uint32_t n, bool one_tile, PlacementResult* results,
                             float* evicted_rows, std::uint8_t* found) {
  std::uint32_t t = 0;
  const DeviceTile<N> tile = my_tile<N>(t);
  TableRef<DeviceTile<N>, DeviceAtomics> table(arrays);
  const std::uint32_t first = one_tile ? 0 : t, last = one_tile ? n : t + 1;
  if ((one_tile && t != 0) || first >= n) return;
  for (std::uint32_t i = first; i < last; ++i) {
    const CallScores scores{&rules, i + 1, 0};  // a later key outscores an earlier one (as STEP)
    const PlacementResult r = table.insert_or_assign(tile, keys[i], values + std::size_t{i} * arrays.row_width, scores,
                                                     evicted_rows + std::size_t{i} * arrays.row_width);
    if (tile.lane() == 0) results[i] = r;
  }
  if (one_tile) return;
  tile.group.sync();
  const bool held = table.find(tile, keys[t], evicted_rows + std::size_t{t} * arrays.row_width, nullptr);
  if (tile.lane() == 0) found[t] = held;
}

// One tile, keys in order: accum_or_assign, accumulating into the even ones.
template <unsigned N>
__global__ void table_accumulate(TableArrays arrays, embscale::kv::ScoreRules rules, const std::uint64_t* keys,
                                 const float* values, std::uint32_t n, PlacementResult* results) {
  std::uint32_t t = 0;
  const DeviceTile<N> tile = my_tile<N>(t);
  if (t != 0) return;
  TableRef<DeviceTile<N>, DeviceAtomics> table(arrays);
  for (std::uint32_t i = 0; i < n; ++i) {
    const CallScores scores{&rules, 1000 + i, 0};
    const PlacementResult r =
        table.accum_or_assign(tile, keys[i], values + std::size_t{i} * arrays.row_width, i % 2 == 0, scores);
    if (tile.lane() == 0) results[i] = r;
  }
}

template <unsigned N> void check_table_batch() {
  constexpr std::uint64_t kBuckets = 256;
  constexpr std::uint32_t kCapacity = 32, kWidth = 16, kKeys = 2000;  // ~8 keys a bucket of 32
  std::mt19937_64 random(400 + N);
  std::vector<std::uint64_t> keys;
  std::set<std::uint64_t> distinct;
  while (keys.size() < kKeys) {
    const std::uint64_t k = random() % 100000000;
    if (distinct.insert(k).second) keys.push_back(k);
  }
  std::vector<std::uint32_t> per_bucket(kBuckets, 0);
  for (const std::uint64_t k : keys) ++per_bucket[mix(k) & (kBuckets - 1)];
  CHECK(*std::max_element(per_bucket.begin(), per_bucket.end()) <= kCapacity,
        "the test's keys overflow a bucket: choose another seed");
  std::vector<float> values(std::size_t{kKeys} * kWidth);
  for (auto& v : values) v = static_cast<float>(random() % 4096) / 16.0f;
  Table table(kBuckets, kCapacity, kWidth);
  std::uint64_t* d_keys = device_copy(keys);
  float* d_values = device_copy(values);
  PlacementResult* d_results = nullptr;
  float* d_rows = nullptr;
  std::uint8_t* d_found = nullptr;
  CUDA_OK(cudaMalloc(&d_results, kKeys * sizeof(PlacementResult)));
  CUDA_OK(cudaMalloc(&d_rows, values.size() * sizeof(float)));
  CUDA_OK(cudaMalloc(&d_found, kKeys));
  const auto& step = embscale::kv::score_rules(embscale::kv::ScoreStrategy::kStep);
  table_upsert<N><<<(kKeys * N + 127) / 128, 128>>>(table.device_view(), step, d_keys, d_values, kKeys, false,
                                                    d_results, d_rows, d_found);
  CUDA_OK(cudaGetLastError());
  const auto results = host_copy(d_results, kKeys);
  const auto rows = host_copy(d_rows, values.size());
  const auto found = host_copy(d_found, kKeys);
  table.to_host();
  std::set<std::uint64_t> held;
  for (const std::uint64_t key : table.slots.host_keys)
    if (holds_key(key))
      CHECK(held.insert(key).second, "tile %u: key %llu held twice", N, static_cast<unsigned long long>(key));
  int wrong = 0;
  for (std::uint32_t i = 0; i < kKeys; ++i) {
    if (results[i].placement != Placement::kFreeSlot) {
      ++wrong;  // no bucket overflows at this load: every key takes a free slot
      continue;
    }
    const bool same_row = std::equal(rows.begin() + std::size_t{i} * kWidth, rows.begin() + std::size_t{i + 1} * kWidth,
                                     values.begin() + std::size_t{i} * kWidth);
    wrong += !found[i] || !same_row || held.count(keys[i]) == 0;
  }
  CHECK(wrong == 0 && held.size() == kKeys, "tile %u: %d of %u keys not placed, found or held with their row", N, wrong,
        kKeys);
  // One tile, keys in order into a small table: evictions, and the host's result exactly.
  Table small(2, kCapacity, kWidth);
  table_upsert<N><<<1, N>>>(small.device_view(), step, d_keys, d_values, 300, true, d_results, d_rows, d_found);
  CUDA_OK(cudaGetLastError());
  const auto seq = host_copy(d_results, 300);
  const auto seq_rows = host_copy(d_rows, std::size_t{300} * kWidth);
  small.to_host();
  Table host(2, kCapacity, kWidth);
  TableRef<HostTile<N>, HostAtomics> host_table(host.host_view());
  const HostTile<N> host_tile;
  std::vector<float> evicted(kWidth);
  int differ = 0, evictions = 0;
  for (std::uint32_t i = 0; i < 300; ++i) {
    const CallScores scores{&step, i + 1, 0};
    const PlacementResult want = host_table.insert_or_assign(
        host_tile, keys[i], values.data() + std::size_t{i} * kWidth, scores, evicted.data());
    evictions += want.placement == Placement::kEvicted;
    const bool same_eviction = want.placement != Placement::kEvicted ||
                               std::equal(evicted.begin(), evicted.end(), seq_rows.begin() + std::size_t{i} * kWidth);
    differ += seq[i].placement != want.placement || seq[i].slot != want.slot || seq[i].victim.key != want.victim.key ||
              !same_eviction;
  }
  CHECK(evictions > 100, "tile %u: the sequence evicted %d times (too few to test)", N, evictions);
  CHECK(differ == 0, "tile %u: %d of 300 sequential placements differ from the host's", N, differ);
  CHECK(small.slots.host_keys == host.slots.host_keys && small.slots.host_scores == host.slots.host_scores &&
            small.host_rows == host.host_rows,
        "tile %u: the sequential table differs from the host's", N);
  // Then accum_or_assign over the same keys on both: rows added to, absent keys left out.
  table_accumulate<N><<<1, N>>>(small.device_view(), step, d_keys, d_values, 300, d_results);
  CUDA_OK(cudaGetLastError());
  const auto acc = host_copy(d_results, 300);
  small.to_host();
  int acc_differ = 0;
  for (std::uint32_t i = 0; i < 300; ++i) {
    const CallScores scores{&step, 1000 + i, 0};
    const PlacementResult want =
        host_table.accum_or_assign(host_tile, keys[i], values.data() + std::size_t{i} * kWidth, i % 2 == 0, scores);
    acc_differ += acc[i].placement != want.placement || acc[i].slot != want.slot;
  }
  CHECK(acc_differ == 0, "tile %u: %d of 300 accum_or_assign placements differ from the host's", N, acc_differ);
  CHECK(small.slots.host_keys == host.slots.host_keys && small.slots.host_scores == host.slots.host_scores &&
            small.host_rows == host.host_rows,
        "tile %u: the table after accum_or_assign differs from the host's", N);
  cudaFree(d_keys);
  cudaFree(d_values);
  cudaFree(d_results);
  cudaFree(d_rows);
  cudaFree(d_found);
}

}  // namespace

int main() {
  if (embscale::gpu_check::no_gpu()) return 77;
  check_concurrent_claims<8>();
  check_concurrent_claims<32>();
  check_victims<8>();
  check_victims<32>();
  check_placements<8>();
  check_placements<32>();
  check_score_rules();
  check_table_batch<8>();
  check_table_batch<32>();
  if (g_failures > 0) {
    std::printf("%d of %d checks FAILED\n", g_failures, g_checks);
    return 1;
  }
  std::printf("PASS: %d checks (the bucket logic on the device equals the host's)\n", g_checks);
  return 0;
}
