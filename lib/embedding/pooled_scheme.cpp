#include "embedding/pooled_scheme.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace embscale::embedding {

RowBlocks::RowBlocks(const LayerSpec& spec, int parts) : offsets(spec.slot_offsets) {
  for (const auto size : spec.slot_sizes) block.push_back((size + parts - 1) / parts);
}

void RowBlocks::add_block(OwnedKeys& owned, const LayerSpec& spec, std::int32_t slot, int part) const {
  const auto s = static_cast<std::size_t>(slot);
  const Key end = offsets[s] + spec.slot_sizes[s];
  const Key first = std::min(end, offsets[s] + part * block[s]);
  owned.add(first, std::min(end, first + block[s]));
}

std::int64_t most_rows_in_blocks(const LayerSpec& spec, int parts) {
  std::int64_t rows = 0;
  for (const auto block : RowBlocks(spec, parts).block) rows += block;
  return rows;
}

std::unique_ptr<EmbeddingScheme> make_whole_table_scheme(const LayerSpec& spec, std::vector<int> owner_of_slot) {
  const int rank = spec.comm->rank(), ranks = spec.comm->size();
  PooledPlan plan;
  plan.output = PooledOutput::kAllToAll;
  plan.owner_slots.resize(static_cast<std::size_t>(ranks));
  plan.column_first.assign(static_cast<std::size_t>(ranks), 0);
  plan.column_count.assign(static_cast<std::size_t>(ranks), spec.dim());
  OwnedKeys owned;
  for (std::int32_t s = 0; s < spec.slots(); ++s) {
    const auto u = static_cast<std::size_t>(s);
    plan.owner_slots[static_cast<std::size_t>(owner_of_slot[u])].push_back(s);
    if (owner_of_slot[u] == rank) owned.add(spec.slot_offsets[u], spec.slot_offsets[u] + spec.slot_sizes[u]);
  }
  return make_pooled_scheme(
      spec, std::move(plan), spec.make_store(owned, spec.dim()),
      OwnerRule::slot_table(std::vector<std::int32_t>(owner_of_slot.begin(), owner_of_slot.end())));
}

std::vector<int> table_nodes(const LayerSpec& spec, int nodes) {
  const auto& given = spec.config->table_nodes;
  if (given.empty()) return place_tables(spec, nodes);
  for (std::size_t i = 0; i < given.size(); ++i)
    if (given[i] >= nodes)
      throw InputError(spec.path + ".table_nodes[" + std::to_string(i) + "]: expected a node below " +
                       std::to_string(nodes) + " (the run's ranks over ranks_per_node), got " +
                       std::to_string(given[i]));
  return std::vector<int>(given.begin(), given.end());
}

std::vector<int> place_tables(const LayerSpec& spec, int bins) {
  std::vector<std::size_t> order(spec.slot_sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return spec.slot_sizes[a] > spec.slot_sizes[b]; });
  std::vector<std::int64_t> load(static_cast<std::size_t>(bins), 0);
  std::vector<int> owner(spec.slot_sizes.size());
  for (const auto s : order) {
    const auto bin = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    owner[s] = static_cast<int>(bin);
    load[bin] += std::max<std::int64_t>(spec.slot_sizes[s], 1);  // sizes unknown (0): one table each
  }
  return owner;
}

}  // namespace embscale::embedding
