// A deterministic slice of the embedding step for instruction counting (scripts/perf-check runs
// it under valgrind's callgrind, whose counts repeat exactly for the same binary and inputs,
// whatever else the machine does). No MPI: generate one batch, route its keys for 2 ranks, gather
// rank 0's rows and pool every bag, as the owner and the requester do in a step.
#include <cstdio>
#include <vector>

#include "embedding/key_router.hpp"
#include "embedding/static_row_store.hpp"
#include "workloads/synthetic.hpp"

int main() {
  using namespace embscale;
  config::DataLayer data;
  data.slot_size_array.assign(8, 20000);
  data.slot_num = 8;
  data.label_dim = 1;
  config::SlotWorkload slot;  // Zipf 1.05, 4 keys per bag
  slot.keys.zipf_alpha = 1.05;
  slot.nnz = 4;
  data.synthetic = config::SyntheticSource::same_for_all(slot, data.slot_num);
  constexpr std::int32_t kDim = 32;
  const workloads::SyntheticGenerator generator(data, 20261122, 2048);
  const Batch batch = generator.generate(0, 0, 1);

  const embedding::ModuloSharding sharding{2};
  embedding::KeyRouter router;
  embedding::RoutedKeys routed;
  router.route(batch.keys, sharding, routed);
  embedding::OwnedKeys rank0_keys;  // key % 2 == 0
  rank0_keys.add(0, generator.total_vocabulary(), 2);
  kv::TableOptions options;
  options.dim = kDim;
  options.seed = 1;
  options.num_embeddings = generator.total_vocabulary();
  options.training = false;
  embedding::StaticRowStore table(rank0_keys, options);
  const std::span<const Key> owned(routed.send_keys.data(), routed.send_counts[0]);
  std::vector<float> rows(owned.size() * kDim);
  table.read(owned, rows);

  // Pool each bag from the gathered rows (rows of keys owned by rank 1 count as zeros here).
  std::vector<float> pooled(static_cast<std::size_t>(batch.num_bags()) * kDim, 0.0f);
  for (std::int64_t b = 0; b < batch.num_bags(); ++b)
    for (auto k = batch.offsets[static_cast<std::size_t>(b)]; k < batch.offsets[static_cast<std::size_t>(b) + 1]; ++k) {
      const auto index = routed.inverse[static_cast<std::size_t>(k)];
      if (index >= owned.size()) continue;
      for (std::size_t d = 0; d < kDim; ++d) pooled[static_cast<std::size_t>(b) * kDim + d] += rows[index * kDim + d];
    }
  double checksum = 0;
  for (const float v : pooled) checksum += v;
  std::printf("keys %zu unique %zu owned %zu checksum %.9g\n", batch.keys.size(), routed.send_keys.size(), owned.size(),
              checksum);
  return 0;
}
