#include "plan/scheme_cost.hpp"

#include <algorithm>
#include <vector>

namespace embscale::plan {
namespace {

// Every registry entry with a planner model, choosable ones first (by ownership, then registry
// order: a stable sort), in one array so that pointers into it order the planned layers.
struct Models {
  std::vector<SchemeModel> all;
  std::size_t choosable = 0;
};

const Models& models() {
  static const Models built = [] {
    Models m;
    for (const auto& entry : embedding::schemes())
      if (entry.planner)
        m.all.push_back(
            {entry.name, entry.planner->ownership, entry.planner->collectives, entry.planner->static_only, &entry});
    std::stable_sort(m.all.begin(), m.all.end(), [](const SchemeModel& a, const SchemeModel& b) {
      const bool a_first = a.entry->planner->choosable, b_first = b.entry->planner->choosable;
      if (a_first != b_first) return a_first;
      return a_first && a.ownership < b.ownership;
    });
    m.choosable = static_cast<std::size_t>(std::count_if(
        m.all.begin(), m.all.end(), [](const SchemeModel& model) { return model.entry->planner->choosable; }));
    return m;
  }();
  return built;
}

constexpr double kPairBytes = 16.0;  // a (key, position) pair on the wire
constexpr double kFloatBytes = 4.0;  // pooled vectors and gradients are fp32
constexpr double kKeyBytes = 8.0;    // a key

}  // namespace

std::span<const SchemeModel> planned_schemes() {
  return std::span<const SchemeModel>(models().all).first(models().choosable);
}

const SchemeModel* planned_scheme(std::string_view name) {
  for (const auto& model : models().all)
    if (name == model.name) return &model;
  return nullptr;
}

const SchemeModel* choosable_scheme(std::string_view name) {
  for (const auto& model : planned_schemes())
    if (name == model.name) return &model;
  return nullptr;
}

void add_table_work(const SchemeModel& model, const LayerShape& shape, const TableModel& table,
                    const std::vector<RankLoad>& loads, double batch_distinct, int owner, std::vector<RankWork>& work) {
  const int ranks = shape.ranks;
  const double p = ranks;
  const double others = (p - 1.0) / p;  // the share of a collective's buffer that leaves a rank
  const double pairs = static_cast<double>(shape.samples) * table.bag_size;  // the step's key occurrences
  const double local_pairs = pairs / p;                                      // every rank routes its own samples' keys
  const double dim = shape.dim;
  const double row_values = dim + shape.state_width;
  const double bag_bytes = static_cast<double>(shape.samples) * dim * kFloatBytes;  // one pooled vector per sample
  // An owner's work for its (pairs, distinct keys), at `width` columns of `values` stored values per row:
  // pool forward and the gradient sums backward touch a row slice per pair; the lookup reads the
  // distinct rows and the update reads and writes them with their optimizer state.
  const auto owner_memory = [&](const RankLoad& load, double width, double values) {
    return 2.0 * load.pairs * width * kFloatBytes + load.distinct * (width + 2.0 * values) * shape.value_bytes;
  };
  // Every rank's stand-in loss reads its pooled vectors and writes their gradients.
  const double loss_bytes = 2.0 * bag_bytes / p;
  const double touched = batch_distinct;  // data_parallel: every rank updates every row any rank touched
  for (int r = 0; r < ranks; ++r) {
    auto& w = work[static_cast<std::size_t>(r)];
    switch (model.ownership) {
      case Ownership::kOneRank: {  // the whole table on its owner (table_wise, localized_slot)
        w.key_ops += local_pairs;
        w.memory_bytes += loss_bytes;
        w.comm_bytes += local_pairs * kPairBytes + 2.0 * bag_bytes / p * others;  // its keys out; its bags back
        if (r == owner) {
          w.key_ops += loads[0].pairs;
          w.row_ops += 2.0 * loads[0].distinct;
          w.memory_bytes += owner_memory(loads[0], dim, row_values);
          w.comm_bytes += loads[0].pairs * kPairBytes + 2.0 * bag_bytes * others;  // every bag of the table, both ways
        }
        break;
      }
      case Ownership::kNodeRowBlocks: {  // row blocks on the table's node (table_row_wise)
        // Pairs go to the table's node; its ranks pool partial bags, reduce-scatter them inside
        // the node (local rank l gets the bags of every node's rank l) and send each rank its
        // bags by an alltoallv across nodes; backward the reverse. Each byte on its link.
        const int rpn = shape.ranks_per_node;
        const double nodes = p / rpn;
        const bool mine = r / rpn == owner;
        const double node_buffer = bag_bytes;  // every bag of the table, on each of the node's ranks
        w.key_ops += local_pairs;
        w.memory_bytes += loss_bytes;
        double intra = 0.0, inter = 0.0;
        if (mine) {
          const auto& load = loads[static_cast<std::size_t>(r % rpn)];
          // Its keys out to the node's other blocks (its own block's stay: no transfer), and the
          // pairs in from the node's other ranks and from the other nodes (each sends its share).
          const double own_block = pairs > 0.0 ? load.pairs / pairs : 0.0;
          intra += local_pairs * (1.0 - own_block) * kPairBytes + load.pairs * (rpn - 1.0) / p * kPairBytes;
          inter += load.pairs * (p - rpn) / p * kPairBytes;
          w.key_ops += load.pairs;
          w.row_ops += 2.0 * load.distinct;
          w.memory_bytes += owner_memory(load, dim, row_values) + 2.0 * node_buffer * (rpn - 1.0) / rpn;
          intra += 2.0 * 2.0 * node_buffer * (rpn - 1.0) / rpn;      // reduce-scatter, all-gather
          inter += 2.0 * (bag_bytes / rpn) * (nodes - 1.0) / nodes;  // its chunk out, gradients in
        } else {
          inter += local_pairs * kPairBytes + 2.0 * bag_bytes / p;  // its keys out; its bags in, their gradients out
        }
        w.intra_node_bytes += intra;
        w.inter_node_bytes += inter;
        w.comm_bytes += intra + inter;
        break;
      }
      case Ownership::kRowBlocks:  // owners pool partial bags, reduce-scatter (row_wise, distributed_slot)
      case Ownership::kKeyModulo: {
        const auto& load = loads[static_cast<std::size_t>(r)];
        w.key_ops += local_pairs + load.pairs;
        w.row_ops += 2.0 * load.distinct;
        w.memory_bytes +=
            owner_memory(load, dim, row_values) + 2.0 * bag_bytes * others + loss_bytes;  // + the reduction's sums
        w.comm_bytes +=
            (local_pairs + load.pairs) * kPairBytes + 2.0 * bag_bytes * others;  // reduce-scatter + all-gather
        break;
      }
      case Ownership::kHotReplicas: {  // hot rows replicated, the rest key % ranks (hot_replicated)
        // The cold keys as under kKeyModulo; the rank's own hot keys read and pooled from its
        // replica; every rank updates every hot row any rank touched, after an allreduce of the
        // hot rows' gradient and touch counts. Splitting the bags reads and writes each key once.
        const auto& load = loads[static_cast<std::size_t>(r)];
        const double hot_rows = static_cast<double>(std::min(table.hot_rows, table.rows));
        const double hot_touched = batch_distinct;  // the hot keys of the global batch
        const double local_cold = local_pairs - load.replica_pairs;
        w.key_ops += local_cold + load.pairs + load.replica_pairs;
        w.row_ops += 2.0 * load.distinct + load.replica_distinct + hot_touched;
        w.memory_bytes += owner_memory(load, dim, row_values) + 2.0 * bag_bytes * others + loss_bytes +
                          2.0 * local_pairs * kKeyBytes + 2.0 * load.replica_pairs * dim * kFloatBytes +
                          load.replica_distinct * dim * shape.value_bytes + 2.0 * hot_rows * (dim + 1.0) * kFloatBytes +
                          hot_touched * 2.0 * row_values * shape.value_bytes;
        w.comm_bytes += (local_cold + load.pairs) * kPairBytes + 2.0 * bag_bytes * others +
                        2.0 * 2.0 * hot_rows * (dim + 1.0) * kFloatBytes * others;
        break;
      }
      case Ownership::kEveryRank: {  // column slices (column_wise)
        const auto& load = loads[static_cast<std::size_t>(r)];
        const double width = dim / p;
        w.key_ops += local_pairs + load.pairs;
        w.row_ops += 2.0 * load.distinct;
        w.memory_bytes += owner_memory(load, width, width + shape.column_state_width) + loss_bytes;
        w.comm_bytes +=
            (pairs + load.pairs) * kPairBytes + 2.0 * bag_bytes / p * others * 2.0;  // every key to every rank
        break;
      }
      case Ownership::kReplicas: {  // replicas, allreduce of the table (data_parallel)
        const auto& load = loads[static_cast<std::size_t>(r)];
        const double rows = static_cast<double>(table.rows);
        w.key_ops += load.pairs;
        w.row_ops += load.distinct + touched;
        w.memory_bytes += loss_bytes + 2.0 * load.pairs * dim * kFloatBytes + load.distinct * dim * shape.value_bytes +
                          2.0 * rows * (dim + 1.0) * kFloatBytes + touched * 2.0 * row_values * shape.value_bytes;
        w.comm_bytes +=
            2.0 * 2.0 * rows * (dim + 1.0) * kFloatBytes * others;  // allreduce of the table's gradient and touches
        break;
      }
    }
  }
}

std::int64_t worthwhile_hot_rows(const TableModel& table, const LayerShape& shape, const CostParameters& cost) {
  // On one rank nothing travels; under a permuted mapping, or a law whose popularity is not
  // falling with the index, the key space's first rows are not its most popular ones.
  if (shape.ranks < 2 || !table.identity_mapping || !table.popularity.non_increasing() || table.rows < 1) return 0;
  const double p = shape.ranks;
  const double others = (p - 1.0) / p;
  const double dim = shape.dim, row_values = dim + shape.state_width;
  const double own_draws = static_cast<double>(shape.samples) * table.bag_size / p;
  // A replicated row's cost on every rank, per step: its share of the two allreduces and of the
  // dense gradient buffer, and (touched) its update on every rank instead of its owner's alone.
  const double replica_seconds =
      2.0 * 2.0 * (dim + 1.0) * kFloatBytes * others * cost.seconds_per_comm_byte +
      2.0 * (dim + 1.0) * kFloatBytes * cost.seconds_per_byte +
      others * (cost.seconds_per_row + 2.0 * row_values * shape.value_bytes * cost.seconds_per_byte);
  // What each of its occurrences saves: the pair's trip (sent by the requester, received by the
  // owner) and the owner's key work.
  const double saved_per_occurrence = 2.0 * kPairBytes * cost.seconds_per_comm_byte + cost.seconds_per_key;
  if (saved_per_occurrence <= 0.0 || own_draws <= 0.0) return 0;
  const double threshold = replica_seconds / (own_draws * saved_per_occurrence);  // the least worthwhile probability
  // Popularity falls with the index: the rows at or above the threshold are a prefix.
  std::int64_t low = 0, high = table.rows;  // probability(k) >= threshold for k < low; below it from high
  while (low < high) {
    const std::int64_t mid = low + (high - low) / 2;
    if (table.popularity.probability(mid) >= threshold) low = mid + 1;
    else high = mid;
  }
  return low;
}

double rank_seconds(const RankWork& work, const CostParameters& cost) {
  const double unclassified = work.comm_bytes - work.intra_node_bytes - work.inter_node_bytes;
  return work.key_ops * cost.seconds_per_key + work.row_ops * cost.seconds_per_row +
         work.memory_bytes * cost.seconds_per_byte + unclassified * cost.seconds_per_comm_byte +
         work.intra_node_bytes * cost.seconds_per_intra_node_byte +
         work.inter_node_bytes * cost.seconds_per_inter_node_byte + work.slow_tier_bytes * cost.seconds_per_slow_byte;
}

}  // namespace embscale::plan
