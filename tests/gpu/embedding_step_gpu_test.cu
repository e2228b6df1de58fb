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
  check_scale_and_regression(rng);
  std::printf("embedding_step: %d checks, %d failures\n", embscale::gpu_check::g_checks,
              embscale::gpu_check::g_failures);
  return embscale::gpu_check::g_failures == 0 ? 0 : 1;
}
