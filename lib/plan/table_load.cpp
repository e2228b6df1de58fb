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

// The keys = r (mod ranks) in [first, end), per rank.
std::vector<double> congruent_keys(Key first, Key end, int ranks) {
  std::vector<double> count(static_cast<std::size_t>(ranks), 0.0);
  if (end <= first) return count;
  const Key n = end - first;
  for (int r = 0; r < ranks; ++r) {
    const Key lead = ((r - first % ranks) % ranks + ranks) % ranks;  // first + lead = r (mod ranks)
    count[static_cast<std::size_t>(r)] = lead < n ? static_cast<double>((n - lead + ranks - 1) / ranks) : 0.0;
  }
  return count;
}

// hot_replicated: the keys whose place in the key space is below hot_rows are looked up by every
// rank for its own draws (draws / ranks); the others are owned by key % ranks. The hottest
// kDirectIndices indices go through the mapping one by one; past them, the identity mapping's
// hot and cold tails are exact ranges, and a permuted mapping's are the shares of the tail's keys
// that are hot and that each rank owns (the mapping scatters the tail's indices over the keys).
std::vector<RankLoad> hot_replica_loads(const TableModel& table, int ranks, double draws) {
  std::vector<RankLoad> loads(static_cast<std::size_t>(ranks));
  const auto& popularity = table.popularity;
  const double own = draws / ranks;
  const std::int64_t hot = std::min(table.hot_rows, table.rows);
  const std::int64_t head = std::min(table.rows, kDirectIndices);
  double replica_pairs = 0.0, replica_distinct = 0.0;
  std::int64_t head_hot = 0;
  std::vector<double> head_cold(static_cast<std::size_t>(ranks), 0.0);
  for (std::int64_t k = head; k-- > 0;) {
    const double p = popularity.probability(k);
    const Key key = table.key_of_index(k);
    if (key - table.offset < hot) {
      replica_pairs += own * p;
      replica_distinct += distinct_term(p, own);
      ++head_hot;
      continue;
    }
    const auto r = static_cast<std::size_t>(key % ranks);
    loads[r].pairs += draws * p;
    loads[r].distinct += distinct_term(p, draws);
    head_cold[r] += 1.0;
  }
  if (head < table.rows) {
    const auto tail_keys = static_cast<double>(table.rows - head);
    // The tail's hot indices [head, split) and cold ones [split, rows), or, permuted, shares.
    const bool ranges = table.identity_mapping;
    const std::int64_t split = std::max(head, hot);
    const double hot_share = ranges ? 1.0 : static_cast<double>(std::max<std::int64_t>(0, hot - head_hot)) / tail_keys;
    replica_pairs += own * hot_share * (ranges ? popularity.mass(head, split) : popularity.mass(head, table.rows));
    replica_distinct += hot_share * (ranges ? popularity.expected_distinct(head, split, own)
                                            : popularity.expected_distinct(head, table.rows, own));
    const std::int64_t from = ranges ? split : head;
    const double cold_pairs = draws * popularity.mass(from, table.rows);
    const double cold_distinct = popularity.expected_distinct(from, table.rows, draws);
    // Each rank's share of the tail: its cold keys there over the tail's keys (the identity's cold
    // tail is the keys offset + [split, rows); a permuted one's are the rank's cold keys not in
    // the head).
    const auto tail_owned = congruent_keys(table.offset + (ranges ? split : hot), table.offset + table.rows, ranks);
    const double keys = ranges ? static_cast<double>(table.rows - split) : tail_keys;
    for (std::size_t r = 0; r < loads.size(); ++r) {
      if (keys <= 0.0) break;
      const double share = (tail_owned[r] - (ranges ? 0.0 : head_cold[r])) / keys;
      loads[r].pairs += cold_pairs * share;
      loads[r].distinct += cold_distinct * share;
    }
  }
  for (auto& load : loads) {
    load.replica_pairs = replica_pairs;
    load.replica_distinct = replica_distinct;
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
    case Ownership::kHotReplicas: return hot_replica_loads(table, ranks, draws);
    case Ownership::kNodeRowBlocks: {  // row blocks over the node's ranks, as if it were node 0
      EMBSCALE_EXPECTS(table.ranks_per_node >= 1 && table.ranks_per_node <= ranks, "a node of 1 to `ranks` ranks");
      auto node = split_loads(table, Ownership::kRowBlocks, table.ranks_per_node, draws);
      std::copy(node.begin(), node.end(), loads.begin());
      return loads;
    }
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
    case Ownership::kNodeRowBlocks: {  // row blocks over the node's ranks, as if it were node 0
      const std::int64_t block = ceil_div(table.rows, table.ranks_per_node);
      for (int r = 0; r < table.ranks_per_node; ++r)
        rows[static_cast<std::size_t>(r)] =
            std::max<std::int64_t>(0, std::min(table.rows, (r + 1) * block) - r * block);
      break;
    }
    case Ownership::kHotReplicas: {  // every hot row, and the keys = r (mod ranks), hot ones too (unused copies)
      const std::int64_t hot = std::min(table.hot_rows, table.rows);
      const auto modulo = congruent_keys(table.offset, table.offset + table.rows, ranks);
      for (std::size_t r = 0; r < rows.size(); ++r) rows[r] = hot + static_cast<std::int64_t>(modulo[r]);
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
