// The embedding_step family of libembscale_cuda.so (kernels/embedding_step.cu) on a GPU against
// plain host loops of the header's definitions (device/families/embedding_step.h), bit for bit: the
// routing of random batches (duplicates, empty bags, Zipf-like heads) under each owner rule on 1
// to 4 ranks and to every rank, the de-duplication and its grouping, the pooling (sums in pair
// order from +0, positions without pairs 0), the unpooling (from each key's first pair), the
// mean's scaling and the stand-in regression. DevicePooledExchange makes exactly these calls (its
// host side is tested on the stand-in in tests/embedding/device_engine_mpi_test.cpp, which holds
// the stand-in to the host engine's bits).
//
// Standalone (cudart and libembscale_cuda.so, no GoogleTest): exits 77 without a GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <vector>

#include "device/families/embedding_step.h"
#include "embedding/portable/step_ref.hpp"
#include "gpu_check.hpp"

namespace {

namespace portable = embscale::embedding::portable;
using embscale::gpu_check::DeviceArray;

struct Batch {
  std::vector<std::int64_t> keys, offsets{0};
  std::int32_t slots = 3;
  std::uint64_t bags() const { return offsets.size() - 1; }
};

// `samples` samples of `slots` bags of 0 to 5 keys, half from a small hot set.
Batch random_batch(std::mt19937_64& rng, std::int64_t samples, std::int32_t slots, std::int64_t keys_per_slot) {
  Batch b;
  b.slots = slots;
  for (std::int64_t s = 0; s < samples; ++s)
    for (std::int32_t t = 0; t < slots; ++t) {
      const auto n = static_cast<int>(rng() % 6);
      for (int k = 0; k < n; ++k) {
        const auto r = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(keys_per_slot));
        b.keys.push_back(t * keys_per_slot + (rng() % 2 ? r % 7 : r));
      }
      b.offsets.push_back(static_cast<std::int64_t>(b.keys.size()));
    }
  return b;
}

// A reduce-scatter-like placement: one group pooling every slot, rank r's bags from base[r].
struct Placement {
  std::vector<std::uint64_t> group_of_dest;
  std::vector<std::int64_t> base, owned;
  std::vector<std::int32_t> slot_index;
  Placement(int ranks, std::int32_t slots, std::int64_t first_bag) {
    group_of_dest.assign(static_cast<std::size_t>(ranks), 0);
    base.assign(static_cast<std::size_t>(ranks), first_bag);
    owned = {slots};
    for (std::int32_t s = 0; s < slots; ++s) slot_index.push_back(s);
  }
  portable::PlacementRef ref(std::int32_t slots) const {
    return {slots, group_of_dest.data(), base.data(), owned.data(), slot_index.data()};
  }
};

void check_route_unique_pool_unpool(std::mt19937_64& rng, int ranks, portable::OwnerKind kind, bool every_rank) {
  const std::int32_t slots = 3;
  const std::int64_t keys_per_slot = 50, samples = 40, first_bag = 7;
  const Batch batch = random_batch(rng, samples, slots, keys_per_slot);
  const std::uint64_t n = batch.keys.size();
  // Node row blocks: two nodes of ranks / 2 ranks (slot_owner then holds nodes).
  const bool nodes = kind == portable::OwnerKind::kNodeRowBlocks;
  const int per_node = nodes ? ranks / 2 : ranks;
  const std::vector<std::int32_t> slot_owner =
      nodes ? std::vector<std::int32_t>{1, 0, 1} : std::vector<std::int32_t>{ranks - 1, 0, ranks / 2};
  const std::vector<std::int64_t> slot_offset = {0, keys_per_slot, 2 * keys_per_slot};
  const std::int64_t block = (keys_per_slot + per_node - 1) / per_node;
  const std::vector<std::int64_t> block_rows = {block, block, block};
  const Placement place(ranks, slots, first_bag);

  // Host: the definitions.
  const portable::OwnerRef host_rule{kind, per_node, slot_owner.data(), slot_offset.data(), block_rows.data()};
  std::vector<std::vector<portable::KeyPosition>> groups(static_cast<std::size_t>(ranks));
  for (std::uint64_t b = 0; b < batch.bags(); ++b) {
    const auto sample = static_cast<std::int64_t>(b / slots);
    const auto slot = static_cast<std::int32_t>(b % slots);
    for (std::int64_t k = batch.offsets[b]; k < batch.offsets[b + 1]; ++k)
      for (int d = 0; d < ranks; ++d)
        if (every_rank ? true : d == portable::owner_of(host_rule, batch.keys[k], slot))
          groups[static_cast<std::size_t>(d)].push_back(
              {batch.keys[k], portable::position_of(place.ref(slots), d, sample, slot)});
  }
  std::vector<portable::KeyPosition> want_pairs;
  for (const auto& g : groups) want_pairs.insert(want_pairs.end(), g.begin(), g.end());

  // Device.
  const DeviceArray<std::int32_t> d_slot_owner(slot_owner);
  const DeviceArray<std::int64_t> d_slot_offset(slot_offset), d_block_rows(block_rows);
  const DeviceArray<std::uint64_t> d_group(place.group_of_dest);
  const DeviceArray<std::int64_t> d_base(place.base), d_owned(place.owned);
  const DeviceArray<std::int32_t> d_index(place.slot_index);
  const portable::OwnerRef rule{kind, per_node, d_slot_owner.get(), d_slot_offset.get(), d_block_rows.get()};
  const portable::PlacementRef placement{slots, d_group.get(), d_base.get(), d_owned.get(), d_index.get()};
  const std::uint64_t positions = static_cast<std::uint64_t>(first_bag + samples * slots);
  std::uint64_t scratch_bytes = 0;
  ABI_OK(embscale_cuda_embedding_step_scratch(want_pairs.size() + n, positions, &scratch_bytes));
  const DeviceArray<char> scratch(scratch_bytes);
  const DeviceArray<std::int64_t> d_keys(batch.keys), d_offsets(batch.offsets);
  const DeviceArray<portable::KeyPosition> d_pairs(want_pairs.size() + 1);
  const DeviceArray<std::uint64_t> d_counts(static_cast<std::size_t>(ranks));
  ABI_OK(embscale_cuda_embedding_step_route(&rule, &placement, every_rank ? 1 : 0, ranks, d_keys.get(), n,
                                            d_offsets.get(), batch.bags(), slots, d_pairs.get(), d_counts.get(),
                                            scratch.get(), nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  const auto counts = d_counts.download();
  auto pairs = d_pairs.download();
  pairs.resize(want_pairs.size());
  for (int d = 0; d < ranks; ++d)
    CHECK(counts[static_cast<std::size_t>(d)] == groups[static_cast<std::size_t>(d)].size(),
          "ranks %d kind %d: count of %d is %llu, expected %zu", ranks, static_cast<int>(kind), d,
          static_cast<unsigned long long>(counts[static_cast<std::size_t>(d)]),
          groups[static_cast<std::size_t>(d)].size());
  bool same = true;
  for (std::size_t j = 0; j < pairs.size(); ++j)
    same = same && pairs[j].key == want_pairs[j].key && pairs[j].position == want_pairs[j].position;
  CHECK(same, "ranks %d kind %d every %d: the routed pairs differ", ranks, static_cast<int>(kind), every_rank ? 1 : 0);

  // De-duplication of all the pairs (as an owner that received them).
  const std::uint64_t m = want_pairs.size();
  std::map<std::int64_t, std::vector<std::uint32_t>> of_key;
  for (std::uint64_t j = 0; j < m; ++j) of_key[want_pairs[j].key].push_back(static_cast<std::uint32_t>(j));
  const DeviceArray<std::int64_t> d_distinct(m + 1);
  const DeviceArray<std::uint64_t> d_count(1);
  const DeviceArray<std::uint32_t> d_inverse(m + 1), d_by_key(m + 1), d_key_begin(m + 1);
  ABI_OK(embscale_cuda_embedding_step_unique(&d_pairs.get()->key, 2, m, d_distinct.get(), d_count.get(),
                                             d_inverse.get(), d_by_key.get(), d_key_begin.get(), scratch.get(),
                                             nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  const std::uint64_t count = d_count.download()[0];
  CHECK(count == of_key.size(), "distinct: %llu, expected %zu", static_cast<unsigned long long>(count), of_key.size());
  const auto distinct = d_distinct.download();
  const auto inverse = d_inverse.download(), by_key = d_by_key.download(), key_begin = d_key_begin.download();
  std::uint32_t i = 0;
  bool grouped = count == of_key.size();
  for (const auto& [key, js] : of_key) {
    if (!grouped) break;
    grouped = distinct[i] == key && key_begin[i + 1] - key_begin[i] == js.size();
    for (std::size_t t = 0; grouped && t < js.size(); ++t)
      grouped = by_key[key_begin[i] + t] == js[t] && inverse[js[t]] == i;
    ++i;
  }
  CHECK(grouped && key_begin[count] == m, "the distinct keys, their inverse or their grouping differ");

  // Pool random rows of the distinct keys, then unpool random output gradients.
  const std::uint64_t width = 33;
  std::normal_distribution<float> normal;
  std::vector<float> rows(count * width), grad_out(positions * width);
  for (auto& v : rows) v = normal(rng);
  for (auto& v : grad_out) v = normal(rng);
  std::vector<float> want_out(positions * width, 0.0f), want_grads(count * width);
  for (std::uint64_t j = 0; j < m; ++j)
    for (std::uint64_t c = 0; c < width; ++c)
      want_out[static_cast<std::uint64_t>(want_pairs[j].position) * width + c] += rows[inverse[j] * width + c];
  for (std::uint64_t k = 0; k < count; ++k)
    for (std::uint64_t c = 0; c < width; ++c) {
      float g = grad_out[static_cast<std::uint64_t>(want_pairs[by_key[key_begin[k]]].position) * width + c];
      for (std::uint32_t at = key_begin[k] + 1; at < key_begin[k + 1]; ++at)
        g += grad_out[static_cast<std::uint64_t>(want_pairs[by_key[at]].position) * width + c];
      want_grads[k * width + c] = g;
    }
  const DeviceArray<float> d_rows(rows), d_out(positions * width), d_grad_out(grad_out), d_grads(count * width);
  ABI_OK(embscale_cuda_embedding_step_pool(d_pairs.get(), d_inverse.get(), m, d_rows.get(), width, d_out.get(),
                                           positions, scratch.get(), nullptr));
  ABI_OK(embscale_cuda_embedding_step_unpool(&d_pairs.get()->position, 2, d_by_key.get(), d_key_begin.get(), count,
                                             d_grad_out.get(), width, 0, d_grads.get(), nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  CHECK(d_out.download() == want_out, "ranks %d kind %d: the pooled sums differ", ranks, static_cast<int>(kind));
  CHECK(d_grads.download() == want_grads, "ranks %d kind %d: the key gradients differ", ranks, static_cast<int>(kind));
}

// Requester blocks and a pooled output: unpack then pack gives the blocks back, each segment where
// the list says.
void check_copy_segments(std::mt19937_64& rng) {
  const std::uint64_t dim = 24, bags = 30;
  std::vector<std::uint64_t> segments;
  std::uint64_t at = 0;
  for (std::uint64_t b = 0; b < bags; ++b) {  // columns [5, 5 + 11) of every bag, then [0, 5)
    segments.insert(segments.end(), {at, b * dim + 5, 11});
    at += 11;
  }
  for (std::uint64_t b = 0; b < bags; ++b) {
    segments.insert(segments.end(), {at, b * dim, 5});
    at += 5;
  }
  std::normal_distribution<float> normal;
  std::vector<float> blocks(at);
  for (auto& v : blocks) v = normal(rng);
  std::vector<float> want(bags * dim, 0.0f);
  for (std::size_t i = 0; i < segments.size(); i += 3)
    std::copy_n(blocks.begin() + static_cast<std::ptrdiff_t>(segments[i]), segments[i + 2],
                want.begin() + static_cast<std::ptrdiff_t>(segments[i + 1]));
  const DeviceArray<std::uint64_t> d_segments(segments);
  const DeviceArray<float> d_blocks(blocks), d_pooled(want.size()), d_back(blocks.size());
  CUDA_OK(cudaMemset(d_pooled.get(), 0, want.size() * sizeof(float)));
  ABI_OK(embscale_cuda_embedding_step_copy_segments(d_segments.get(), segments.size() / 3, 0, d_blocks.get(),
                                                    d_pooled.get(), nullptr));
  ABI_OK(embscale_cuda_embedding_step_copy_segments(d_segments.get(), segments.size() / 3, 1, d_pooled.get(),
                                                    d_back.get(), nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  CHECK(d_pooled.download() == want, "unpacked blocks differ");
  CHECK(d_back.download() == blocks, "packed blocks differ");
}

// The requester-pooled flow (device_all2all_dense.cpp): (key, bag) pairs of the batch, their
// de-duplication, the distinct keys grouped by owner, rows scattered back to de-duplicated order,
// the bags pooled, the gradients unpooled from +0; the owner's side: a key array de-duplicated
// (stride 1) and its gradients summed per key by index (no positions), from +0.
void check_requester_flow(std::mt19937_64& rng) {
  const std::int32_t slots = 3, ranks = 3;
  const Batch batch = random_batch(rng, 30, slots, 40);
  const std::uint64_t n = batch.keys.size(), bags = batch.bags(), dim = 8;
  const Placement bag_place(1, slots, 0);
  const DeviceArray<std::uint64_t> d_group(bag_place.group_of_dest);
  const DeviceArray<std::int64_t> d_base(bag_place.base), d_owned(bag_place.owned);
  const DeviceArray<std::int32_t> d_index(bag_place.slot_index);
  const portable::PlacementRef placement{slots, d_group.get(), d_base.get(), d_owned.get(), d_index.get()};
  const portable::OwnerRef one{}, modulo{portable::OwnerKind::kModulo, ranks};
  std::uint64_t scratch_bytes = 0;
  ABI_OK(embscale_cuda_embedding_step_scratch(n, bags, &scratch_bytes));
  const DeviceArray<char> scratch(scratch_bytes);
  const DeviceArray<std::int64_t> d_keys(batch.keys), d_offsets(batch.offsets);
  const DeviceArray<portable::KeyPosition> d_pairs(n);
  const DeviceArray<std::uint64_t> d_one(1), d_count(1), d_counts(ranks);
  ABI_OK(embscale_cuda_embedding_step_route(&one, &placement, 1, 1, d_keys.get(), n, d_offsets.get(), bags, slots,
                                            d_pairs.get(), d_one.get(), scratch.get(), nullptr));
  const DeviceArray<std::int64_t> d_distinct(n), d_grouped(n);
  const DeviceArray<std::uint32_t> d_inverse(n), d_by_key(n), d_key_begin(n + 1), d_order(n);
  ABI_OK(embscale_cuda_embedding_step_unique(&d_pairs.get()->key, 2, n, d_distinct.get(), d_count.get(),
                                             d_inverse.get(), d_by_key.get(), d_key_begin.get(), scratch.get(),
                                             nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  const std::uint64_t count = d_count.download()[0];
  ABI_OK(embscale_cuda_embedding_step_group(&modulo, ranks, d_distinct.get(), count, d_grouped.get(), d_order.get(),
                                            d_counts.get(), scratch.get(), nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  // Host: the distinct keys ascending, then grouped by key % ranks in that order.
  std::vector<std::int64_t> distinct(batch.keys);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  CHECK(count == distinct.size(), "requester: %llu distinct keys, expected %zu", static_cast<unsigned long long>(count),
        distinct.size());
  std::vector<std::uint32_t> order;
  std::vector<std::uint64_t> counts(ranks, 0);
  for (int r = 0; r < ranks; ++r)
    for (std::uint32_t i = 0; i < distinct.size(); ++i)
      if (distinct[i] % ranks == r) {
        order.push_back(i);
        ++counts[static_cast<std::size_t>(r)];
      }
  auto got_order = d_order.download();
  got_order.resize(count);
  CHECK(got_order == order && d_counts.download() == counts, "group: the order or the counts differ");
  // Rows arriving in grouped order, scattered back; pooled per bag from +0; unpooled from +0.
  std::normal_distribution<float> normal;
  std::vector<float> vectors(count * dim), grad(bags * dim);
  for (auto& v : vectors) v = normal(rng);
  for (auto& v : grad) v = normal(rng);
  std::vector<float> rows(count * dim), want_pooled(bags * dim, 0.0f), want_grads(count * dim, 0.0f);
  for (std::uint64_t p = 0; p < count; ++p)
    std::copy_n(vectors.begin() + static_cast<std::ptrdiff_t>(p * dim), dim,
                rows.begin() + static_cast<std::ptrdiff_t>(order[p] * dim));
  const auto index_of = [&](std::int64_t key) {
    return static_cast<std::uint64_t>(std::lower_bound(distinct.begin(), distinct.end(), key) - distinct.begin());
  };
  for (std::uint64_t b = 0; b < bags; ++b)
    for (std::int64_t k = batch.offsets[b]; k < batch.offsets[b + 1]; ++k)
      for (std::uint64_t d = 0; d < dim; ++d) {
        want_pooled[b * dim + d] += rows[index_of(batch.keys[k]) * dim + d];
        want_grads[index_of(batch.keys[k]) * dim + d] += grad[b * dim + d];
      }
  const DeviceArray<float> d_vectors(vectors), d_rows(count * dim), d_pooled(bags * dim), d_grad(grad),
      d_grads(count * dim);
  ABI_OK(embscale_cuda_embedding_step_permute(d_vectors.get(), d_order.get(), count, dim, 1, d_rows.get(), nullptr));
  ABI_OK(embscale_cuda_embedding_step_pool(d_pairs.get(), d_inverse.get(), n, d_rows.get(), dim, d_pooled.get(), bags,
                                           scratch.get(), nullptr));
  ABI_OK(embscale_cuda_embedding_step_unpool(&d_pairs.get()->position, 2, d_by_key.get(), d_key_begin.get(), count,
                                             d_grad.get(), dim, 1, d_grads.get(), nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  CHECK(d_rows.download() == rows, "permute (scatter): the rows differ");
  CHECK(d_pooled.download() == want_pooled, "requester: the pooled bags differ");
  CHECK(d_grads.download() == want_grads, "requester: the key gradients differ");
  // The owner's side: the grouped keys as received (a key array), their gradients by index.
  const DeviceArray<std::int64_t> d_owner_distinct(count);
  const DeviceArray<std::uint32_t> d_owner_inverse(count), d_owner_by_key(count), d_owner_begin(count + 1);
  ABI_OK(embscale_cuda_embedding_step_unique(d_grouped.get(), 1, count, d_owner_distinct.get(), d_count.get(),
                                             d_owner_inverse.get(), d_owner_by_key.get(), d_owner_begin.get(),
                                             scratch.get(), nullptr));
  const DeviceArray<float> d_owner_grads(count * dim), d_gathered(count * dim);
  ABI_OK(embscale_cuda_embedding_step_unpool(nullptr, 1, d_owner_by_key.get(), d_owner_begin.get(), count,
                                             d_vectors.get(), dim, 1, d_owner_grads.get(), nullptr));
  ABI_OK(
      embscale_cuda_embedding_step_permute(d_vectors.get(), d_order.get(), count, dim, 0, d_gathered.get(), nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  // Each grouped key is distinct: its gradient is its own row (0 + row), the gather follows order.
  std::vector<float> want_owner(count * dim), want_gathered(count * dim);
  const auto owner_inverse = d_owner_inverse.download();
  for (std::uint64_t j = 0; j < count; ++j)
    for (std::uint64_t d = 0; d < dim; ++d) {
      want_owner[owner_inverse[j] * dim + d] = 0.0f + vectors[j * dim + d];
      want_gathered[j * dim + d] = vectors[order[j] * dim + d];
    }
  CHECK(d_owner_grads.download() == want_owner, "owner: the gradients by index differ");
  CHECK(d_gathered.download() == want_gathered, "permute (gather): the rows differ");
}

// Empty batches: every call succeeds, counts zero, pooled output zero.
void check_empty() {
  const std::int32_t slots = 2;
  const std::vector<std::int64_t> offsets(7, 0);  // 6 empty bags
  const Placement place(2, slots, 0);
  const DeviceArray<std::uint64_t> d_group(place.group_of_dest);
  const DeviceArray<std::int64_t> d_base(place.base), d_owned(place.owned), d_offsets(offsets);
  const DeviceArray<std::int32_t> d_index(place.slot_index);
  const portable::PlacementRef placement{slots, d_group.get(), d_base.get(), d_owned.get(), d_index.get()};
  const portable::OwnerRef modulo{portable::OwnerKind::kModulo, 2};
  std::uint64_t bytes = 0;
  ABI_OK(embscale_cuda_embedding_step_scratch(0, 6, &bytes));
  const DeviceArray<char> scratch(bytes);
  const DeviceArray<std::uint64_t> d_counts(std::vector<std::uint64_t>{7, 7}), d_count(std::vector<std::uint64_t>{7});
  const DeviceArray<std::uint32_t> d_key_begin(std::vector<std::uint32_t>{7});
  const DeviceArray<float> d_out(std::vector<float>(6 * 4, 1.0f));
  for (const int every : {0, 1}) {
    ABI_OK(embscale_cuda_embedding_step_route(&modulo, &placement, every, 2, nullptr, 0, d_offsets.get(), 6, slots,
                                              nullptr, d_counts.get(), scratch.get(), nullptr));
    CUDA_OK(cudaDeviceSynchronize());
    CHECK(d_counts.download() == std::vector<std::uint64_t>(2, 0), "empty route (every %d): counts not zero", every);
  }
  ABI_OK(embscale_cuda_embedding_step_unique(nullptr, 2, 0, nullptr, d_count.get(), nullptr, nullptr, d_key_begin.get(),
                                             scratch.get(), nullptr));
  ABI_OK(embscale_cuda_embedding_step_pool(nullptr, nullptr, 0, nullptr, 4, d_out.get(), 6, scratch.get(), nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  CHECK(d_count.download()[0] == 0 && d_key_begin.download()[0] == 0, "empty unique: not zero");
  CHECK(d_out.download() == std::vector<float>(6 * 4, 0.0f), "empty pool: the output is not zero");
}

void check_scale_and_regression(std::mt19937_64& rng) {
  const Batch batch = random_batch(rng, 64, 4, 100);
  const std::uint64_t dim = 16, bags = batch.bags(), samples = 64, width = 4 * dim;
  std::normal_distribution<float> normal;
  std::vector<float> values(bags * dim), labels(samples * 2);
  for (auto& v : values) v = normal(rng);
  for (std::size_t s = 0; s < labels.size(); ++s) labels[s] = static_cast<float>(rng() % 2);
  std::vector<float> scaled = values;
  for (std::uint64_t b = 0; b < bags; ++b)
    for (std::uint64_t d = 0; d < dim; ++d)
      scaled[b * dim + d] *= portable::bag_scale(batch.offsets[b + 1] - batch.offsets[b]);
  std::vector<double> want_loss(samples);
  std::vector<float> want_grad(bags * dim);
  const double inv_batch = 1.0 / 1000.0;
  for (std::uint64_t s = 0; s < samples; ++s)
    want_loss[s] =
        portable::regression_sample(scaled.data() + s * width, width, portable::regression_target_of(labels[s * 2]),
                                    inv_batch, want_grad.data() + s * width);
  const DeviceArray<std::int64_t> d_offsets(batch.offsets);
  const DeviceArray<float> d_values(values), d_labels(labels), d_grad(bags * dim);
  const DeviceArray<double> d_loss(samples);
  ABI_OK(embscale_cuda_embedding_step_scale_bags(d_offsets.get(), bags, dim, d_values.get(), nullptr));
  ABI_OK(embscale_cuda_embedding_step_regression(d_values.get(), d_labels.get(), 2, samples, width, inv_batch,
                                                 d_loss.get(), d_grad.get(), nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  CHECK(d_values.download() == scaled, "the mean's scaling differs");
  CHECK(d_loss.download() == want_loss, "the per-sample losses differ");
  CHECK(d_grad.download() == want_grad, "the regression's gradients differ");
}

}  // namespace

int main() {
  if (embscale::gpu_check::no_gpu()) return 77;
  std::uint64_t owner = 0, placement = 0, pair = 0;
  ABI_OK(embscale_cuda_embedding_step_layout(&owner, &placement, &pair));
  CHECK(owner == sizeof(portable::OwnerRef) && placement == sizeof(portable::PlacementRef) &&
            pair == sizeof(portable::KeyPosition),
        "layouts %llu %llu %llu", static_cast<unsigned long long>(owner), static_cast<unsigned long long>(placement),
        static_cast<unsigned long long>(pair));
  std::mt19937_64 rng(20261128);
  for (int ranks = 1; ranks <= 4; ++ranks) {
    for (const auto kind :
         {portable::OwnerKind::kModulo, portable::OwnerKind::kSlotTable, portable::OwnerKind::kRowBlocks})
      check_route_unique_pool_unpool(rng, ranks, kind, false);
    check_route_unique_pool_unpool(rng, ranks, portable::OwnerKind::kModulo, true);
    if (ranks % 2 == 0) check_route_unique_pool_unpool(rng, ranks, portable::OwnerKind::kNodeRowBlocks, false);
  }
  check_copy_segments(rng);
  check_requester_flow(rng);
  check_empty();
  check_scale_and_regression(rng);
  std::printf("embedding_step: %d checks, %d failures\n", embscale::gpu_check::g_checks,
              embscale::gpu_check::g_failures);
  return embscale::gpu_check::g_failures == 0 ? 0 : 1;
}
