#include "plan/table_load.hpp"

#include <algorithm>
#include <memory>

#include "core/error.hpp"
#include "workloads/slot_generator.hpp"

namespace embscale::plan {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

int owner_of(const TableModel& table, Ownership ownership, int ranks, Key key) {
  if (ownership == Ownership::kRowBlocks) return static_cast<int>((key - table.offset) / ceil_div(table.rows, ranks));
  return static_cast<int>(key % ranks);  // kKeyModulo
}

// Per rank: the expected pairs and distinct keys of `draws` draws of the table's keys, for an
// ownership that splits the keys (row blocks, key modulo). The hottest kDirectIndices indices go
// through the mapping one by one; past them the terms are smooth, and a rank's share of the tail is
// exact for row blocks of the identity mapping, else the share of the tail's keys it owns (the
// mapping scatters the tail's indices over the keys).
std::vector<RankLoad> split_loads(const TableModel& table, Ownership ownership, int ranks, double draws) {
  std::vector<RankLoad> loads(static_cast<std::size_t>(ranks));
  const auto& popularity = table.popularity;
  const std::int64_t head = std::min(table.rows, kDirectIndices);
  std::vector<std::int64_t> head_keys(static_cast<std::size_t>(ranks), 0);
  for (std::int64_t k = head; k-- > 0;) {
    const double p = popularity.probability(k);
    const auto r = static_cast<std::size_t>(owner_of(table, ownership, ranks, table.key_of_index(k)));
    loads[r].pairs += draws * p;
    loads[r].distinct += distinct_term(p, draws);
    ++head_keys[r];
  }
  if (head == table.rows) return loads;
  if (ownership == Ownership::kRowBlocks && table.identity_mapping) {
    const std::int64_t block = ceil_div(table.rows, ranks);
    for (int r = 0; r < ranks; ++r) {
      const std::int64_t first = std::max(head, std::min(table.rows, r * block));
      const std::int64_t last = std::max(first, std::min(table.rows, (r + 1) * block));
      loads[static_cast<std::size_t>(r)].pairs += draws * popularity.mass(first, last);
      loads[static_cast<std::size_t>(r)].distinct += popularity.expected_distinct(first, last, draws);
    }
    return loads;
  }
  const double tail_pairs = draws * popularity.mass(head, table.rows);
  const double tail_distinct = popularity.expected_distinct(head, table.rows, draws);
  const auto owned = owned_rows(table, ownership, ranks);
  const auto tail_keys = static_cast<double>(table.rows - head);
  for (std::size_t r = 0; r < loads.size(); ++r) {
    const double share = static_cast<double>(owned[r] - head_keys[r]) / tail_keys;
    loads[r].pairs += tail_pairs * share;
    loads[r].distinct += tail_distinct * share;
  }
  return loads;
}

std::vector<RankLoad> loads_of_draws(const TableModel& table, Ownership ownership, int ranks, double draws) {
  std::vector<RankLoad> loads(static_cast<std::size_t>(ranks));
  switch (ownership) {
    case Ownership::kOneRank:
      loads[0] = {draws, table.popularity.expected_distinct(0, table.rows, draws)};
      return loads;
    case Ownership::kEveryRank:
      loads.assign(loads.size(), {draws, table.popularity.expected_distinct(0, table.rows, draws)});
      return loads;
    case Ownership::kReplicas: {
      const double own = draws / ranks;
      loads.assign(loads.size(), {own, table.popularity.expected_distinct(0, table.rows, own)});
      return loads;
    }
    case Ownership::kRowBlocks:
    case Ownership::kKeyModulo: return split_loads(table, ownership, ranks, draws);
  }
  return loads;
}

}  // namespace

bool has_skew_model(const config::Config& config, std::int32_t slot, std::string& why_not) {
  const auto& data = config.data;
  if (data.format != config::DataFormat::kSynthetic) {
    why_not = "a trace (\"" + config::to_string(data.format) + "\") has no generator's parameters to predict from";
    return false;
  }
  const auto& workload = data.synthetic.slots[static_cast<std::size_t>(slot)];
  return analytic_bag_size(workload, why_not) &&
         KeyPopularity::of(workload.keys, data.slot_size_array[static_cast<std::size_t>(slot)], why_not);
}

TableModel table_model(const config::Config& config, std::int32_t slot, bool skew_aware) {
  const auto& data = config.data;
  const auto us = static_cast<std::size_t>(slot);
  TableModel table;
  table.slot = slot;
  table.rows = data.slot_size_array[us];
  for (std::size_t s = 0; s < us; ++s) table.offset += data.slot_size_array[s];
  const Key first = table.offset;
  table.key_of_index = [first](std::int64_t i) { return first + i; };
  table.popularity = KeyPopularity::uniform(table.rows);
  if (data.format != config::DataFormat::kSynthetic) {
    std::string why_not;
    if (skew_aware && !has_skew_model(config, slot, why_not))
      throw InputError("layers[" + data.name +
                       "].format: the skew-aware planner predicts loads from a generator's "
                       "parameters; " +
                       why_not + " (plan it skew-blind: \"sharding\": \"auto_skew_blind\")");
    table.bag_size = static_cast<double>(std::max<std::int64_t>(1, data.max_nnz));  // all a trace's config says
    return table;
  }
  const auto& workload = data.synthetic.slots[us];
  std::string why_not;
  const auto bag = analytic_bag_size(workload, why_not);
  table.bag_size = bag ? *bag : static_cast<double>(workload.nnz);
  if (skew_aware) {
    auto popularity = bag ? KeyPopularity::of(workload.keys, table.rows, why_not) : std::nullopt;
    if (!popularity)
      throw InputError("layers[" + data.name + "].synthetic (slot " + std::to_string(slot) +
                       "): the skew-aware planner has no model of this slot's loads: " + why_not +
                       " (plan it skew-blind: \"sharding\": \"auto_skew_blind\")");
    table.popularity = std::move(*popularity);
    table.identity_mapping = workload.mapping == config::KeyMapping::kIdentity;
    if (!table.identity_mapping) {
      auto generator = std::make_shared<workloads::SlotGenerator>(workload, static_cast<std::uint64_t>(table.rows),
                                                                  table.offset, config.solver.seed, slot);
      table.key_of_index = [generator](std::int64_t i) { return generator->to_key(static_cast<std::uint64_t>(i)); };
    }
  }
  return table;
}

std::vector<RankLoad> expected_loads(const TableModel& table, Ownership ownership, int ranks, std::int64_t samples) {
  EMBSCALE_EXPECTS(ranks >= 1 && samples >= 0, "loads need ranks >= 1 and samples >= 0");
  return loads_of_draws(table, ownership, ranks, static_cast<double>(samples) * table.bag_size);
}

std::vector<std::int64_t> owned_rows(const TableModel& table, Ownership ownership, int ranks) {
  std::vector<std::int64_t> rows(static_cast<std::size_t>(ranks), 0);
  switch (ownership) {
    case Ownership::kOneRank: rows[0] = table.rows; break;
    case Ownership::kEveryRank:
    case Ownership::kReplicas: rows.assign(rows.size(), table.rows); break;
    case Ownership::kRowBlocks: {
      const std::int64_t block = ceil_div(table.rows, ranks);
      for (int r = 0; r < ranks; ++r)
        rows[static_cast<std::size_t>(r)] =
            std::max<std::int64_t>(0, std::min(table.rows, (r + 1) * block) - r * block);
      break;
    }
    case Ownership::kKeyModulo: {
      // Keys offset .. offset + rows - 1: rank r owns those = r (mod ranks).
      for (int r = 0; r < ranks; ++r) {
        const Key first = table.offset + ((r - table.offset % ranks) % ranks + ranks) % ranks;  // first key = r
        const Key end = table.offset + table.rows;
        rows[static_cast<std::size_t>(r)] = first < end ? (end - first + ranks - 1) / ranks : 0;
      }
      break;
    }
  }
  return rows;
}

std::vector<double> distinct_over_run(const TableModel& table, Ownership ownership, int ranks, std::int64_t samples,
                                      std::int64_t steps) {
  const auto loads = loads_of_draws(table, ownership, ranks,
                                    static_cast<double>(samples) * static_cast<double>(steps) * table.bag_size);
  std::vector<double> distinct;
  for (const auto& load : loads) distinct.push_back(load.distinct);
  return distinct;
}

}  // namespace embscale::plan
