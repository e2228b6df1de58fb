#include "plan/simulation.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

#include "core/batch_source.hpp"
#include "core/error.hpp"
#include "core/stop_request.hpp"
#include "embedding/engine.hpp"
#include "embedding/key_router.hpp"
#include "embedding/owner_rule.hpp"
#include "embedding/pooled_scheme.hpp"
#include "embedding/scheme_registry.hpp"
#include "plan/hardware_costs.hpp"
#include "plan/plan_model.hpp"
#include "workloads/batch_source_factory.hpp"

namespace embscale::plan {
namespace {

using embedding::Deduplication;
using embedding::KeyRouter;
using embedding::OwnerRule;
using embedding::RoutedKeys;

constexpr double kPairBytes = 16.0;  // a (key, position) pair on the wire (PooledExchange)
constexpr double kKeyBytes = 8.0;    // a key (all2all_dense sends keys alone)
constexpr double kCountBytes = 8.0;  // a std::size_t count of the alltoall before an alltoallv
constexpr double kFloatBytes = 4.0;  // pooled vectors, rows on the wire and gradients are fp32

// A layer's data flow, as its scheme runs it.
enum class Flow {
  kToOwners,      // (key, bag) pairs to the owner of each key (an OwnerRule), pooled there
  kEveryRank,     // every pair to every rank, each pools its columns (column_wise)
  kReplicas,      // no exchange of keys; the table's gradient allreduced (data_parallel)
  kKeysToOwners,  // distinct keys to key % ranks, rows back, requesters pool (all2all_dense)
  // Pairs to the row-block owner inside the table's node; partial sums reduced inside the node,
  // then an alltoallv across nodes (table_row_wise)
  kNodeThenCross,
  // Each slot's first hot_rows keys looked up by every rank in its replica, their gradient
  // allreduced; the rest to key % ranks as kToOwners (hot_replicated)
  kHotReplicas,
};

// Bytes per rank and link class, summed over a step's transfers.
class Links {
 public:
  // Per rank: bytes sent to and received from ranks inside its node, and across nodes.
  std::vector<double> sent_intra, sent_inter, recv_intra, recv_inter;

  Links(int ranks, std::int64_t ranks_per_node)
      : sent_intra(static_cast<std::size_t>(ranks)), sent_inter(sent_intra), recv_intra(sent_intra),
        recv_inter(sent_intra), ranks_(ranks), per_node_(ranks_per_node) {}

  int node(int rank) const { return static_cast<int>(rank / per_node_); }
  void clear() {
    for (auto* v : {&sent_intra, &sent_inter, &recv_intra, &recv_inter}) std::fill(v->begin(), v->end(), 0.0);
  }
  void add(int from, int to, double bytes) {
    if (from == to) return;  // a copy to itself is no traffic
    const bool inside = node(from) == node(to);
    (inside ? sent_intra : sent_inter)[static_cast<std::size_t>(from)] += bytes;
    (inside ? recv_intra : recv_inter)[static_cast<std::size_t>(to)] += bytes;
  }
  // Every rank i sends every other rank j a(i) * b(j) bytes, in O(ranks): a node's sums stand for
  // its members.
  void add_product(const std::vector<double>& a, const std::vector<double>& b) {
    const int nodes = node(ranks_ - 1) + 1;
    std::vector<double> a_node(static_cast<std::size_t>(nodes), 0.0), b_node(a_node);
    for (int r = 0; r < ranks_; ++r) {
      a_node[static_cast<std::size_t>(node(r))] += a[static_cast<std::size_t>(r)];
      b_node[static_cast<std::size_t>(node(r))] += b[static_cast<std::size_t>(r)];
    }
    const double a_all = std::accumulate(a.begin(), a.end(), 0.0), b_all = std::accumulate(b.begin(), b.end(), 0.0);
    for (int r = 0; r < ranks_; ++r) {
      const auto i = static_cast<std::size_t>(r), n = static_cast<std::size_t>(node(r));
      sent_intra[i] += a[i] * (b_node[n] - b[i]);
      sent_inter[i] += a[i] * (b_all - b_node[n]);
      recv_intra[i] += b[i] * (a_node[n] - a[i]);
      recv_inter[i] += b[i] * (a_all - a_node[n]);
    }
  }
  double sent(int r) const { return sent_intra[static_cast<std::size_t>(r)] + sent_inter[static_cast<std::size_t>(r)]; }
  double received(int r) const {
    return recv_intra[static_cast<std::size_t>(r)] + recv_inter[static_cast<std::size_t>(r)];
  }
  // The rank's bytes sent and received: on all links, and inside its node.
  double all(int r) const { return sent(r) + received(r); }
  double intra(int r) const {
    return sent_intra[static_cast<std::size_t>(r)] + recv_intra[static_cast<std::size_t>(r)];
  }

 private:
  int ranks_;
  std::int64_t per_node_;
};

// Per rank, a layer's counters of one step (the run's names).
struct LayerCounts {
  explicit LayerCounts(int ranks)
      : keys(ranks), pairs_sent(ranks), pairs_received(ranks), lookups(ranks), unique_keys(ranks), exchange_sent(ranks),
        exchange_recv(ranks), hot_keys(ranks), hot_lookups(ranks), comm_sent(ranks), comm_recv(ranks),
        link_bytes(ranks), intra_bytes(ranks), work(static_cast<std::size_t>(ranks)) {}
  std::vector<double> keys, pairs_sent, pairs_received, lookups, unique_keys, exchange_sent, exchange_recv;
  std::vector<double> hot_keys, hot_lookups;  // kHotReplicas: the rank's occurrences of hot keys, its distinct ones
  // The bytes the Communicator counts (what a run's bytes_sent and bytes_recv hold): to and from
  // other ranks, but a reduce-scatter counts its whole buffer sent and an allreduce its buffer
  // both ways (comm/mpi_communicator.cpp).
  std::vector<double> comm_sent, comm_recv;
  // The layer's bytes sent and received on all links, and inside the rank's node.
  std::vector<double> link_bytes, intra_bytes;
  std::vector<RankWork> work;
};

// A layer of the (planned) config as simulate() runs it.
struct SimulatedLayer {
  const LayerContext* context = nullptr;
  std::string prefix;  // "" or "<layer>." (a run's names with several layers)
  Flow flow = Flow::kToOwners;
  std::optional<OwnerRule> owner;      // kToOwners: by layer slot
  std::vector<std::int32_t> slots;     // the Data layer's slots, in layer order
  std::vector<std::int64_t> sizes;     // their rows
  std::vector<Key> offsets;            // their first keys
  std::vector<std::int64_t> hot_rows;  // kHotReplicas: each layer slot's replicated rows
  std::vector<int> owner_of_slot;      // whole tables: each layer slot's rank
  bool deduplicate = true;             // the layer's deduplicate (all2all_dense, data_parallel)
  bool training = true;                // false: evaluation, forward only (no gradient travels)
  int collectives = 0;
  // kNodeThenCross: ranks per node (the layer's, else the simulation's) and each layer slot's node.
  int ranks_per_node = 1;
  std::vector<int> node_of_slot;
};

Flow flow_of(const LayerContext& context) {
  if (embedding::scheme_of(*context.layer).places_ranks_in_nodes) return Flow::kNodeThenCross;
  if (!context.fixed) return Flow::kKeysToOwners;  // checked to be all2all_dense by the caller
  switch (context.fixed->ownership) {
    case Ownership::kEveryRank: return Flow::kEveryRank;
    case Ownership::kReplicas: return Flow::kReplicas;
    case Ownership::kHotReplicas: return Flow::kHotReplicas;
    default: return Flow::kToOwners;
  }
}

// The owner rule each scheme's factory builds (lib/embedding/schemes/*.cpp), for `ranks` ranks.
OwnerRule owner_rule(const LayerContext& context, const embedding::LayerSpec& spec, int ranks) {
  switch (context.fixed->ownership) {
    case Ownership::kOneRank:
      return OwnerRule::slot_table(std::vector<std::int32_t>(context.fixed_owner.begin(), context.fixed_owner.end()));
    case Ownership::kRowBlocks: {
      const embedding::RowBlocks blocks(spec, ranks);
      return OwnerRule::row_blocks(blocks.offsets, blocks.block);
    }
    default: return OwnerRule::modulo(ranks);
  }
}

// The schemes simulate() counts: those with a planner model, and by their capabilities
// all2all_dense (distinct keys to their owners, no model) and table_row_wise (nodes).
bool is_simulated(const embedding::SchemeEntry& entry) {
  return entry.planner.has_value() || (entry.dedups_before_exchange && !entry.planner) || entry.places_ranks_in_nodes;
}

// table_row_wise's placement on `ranks` ranks in nodes of `per_node` (the layer's
// ranks_per_node, else the simulation's): the owner rule and each slot's node, as
// schemes/table_row_wise.cpp builds them.
void place_in_nodes(SimulatedLayer& sim, const embedding::LayerSpec& spec, int ranks, std::int64_t per_node) {
  const auto& layer = *sim.context->layer;
  // Unset on the layer: the host's ranks, which on fewer ranks than a node holds are all of them.
  const std::int64_t rpn = layer.ranks_per_node > 0 ? layer.ranks_per_node : std::min<std::int64_t>(per_node, ranks);
  if (rpn < 1 || ranks % rpn != 0)
    throw InputError("layers[" + layer.name + "].ranks_per_node: " + std::to_string(ranks) +
                     " ranks do not split into nodes of " + std::to_string(rpn) +
                     " (the layer's ranks_per_node, else --ranks-per-node or the hardware's devices per node)");
  if (!spec.key_spaces_known)
    throw InputError("layers[" + layer.name +
                     "]: table_row_wise splits each slot's key space, which the data does not give (slot_size_array)");
  sim.ranks_per_node = static_cast<int>(rpn);
  sim.node_of_slot = embedding::table_nodes(spec, ranks / sim.ranks_per_node);
  const embedding::RowBlocks blocks(spec, sim.ranks_per_node);
  sim.owner = OwnerRule::node_row_blocks(std::vector<std::int32_t>(sim.node_of_slot.begin(), sim.node_of_slot.end()),
                                         sim.ranks_per_node, blocks.offsets, blocks.block);
}

std::vector<SimulatedLayer> simulated_layers(const config::Config& config, const PlanModel& model, int ranks,
                                             std::int64_t per_node) {
  std::vector<SimulatedLayer> layers;
  for (const auto& context : model.contexts()) {
    const auto& layer = *context.layer;
    if (context.planned)
      throw Error("simulate: layers[" + layer.name + "] is still \"auto\": plan the config first (plan_for_run)");
    if (!is_simulated(embedding::scheme_of(layer)))
      throw InputError("layers[" + layer.name + "]: simulate counts " + simulated_scheme_names() +
                       "; this layer runs " + context.fixed_name);
    SimulatedLayer sim;
    sim.context = &context;
    sim.prefix = config.embeddings.size() > 1 ? layer.name + "." : "";
    sim.flow = flow_of(context);
    sim.slots = layer.slots;
    for (const auto slot : sim.slots) {
      sim.sizes.push_back(config.data.slot_size_array[static_cast<std::size_t>(slot)]);
      sim.offsets.push_back(
          std::accumulate(config.data.slot_size_array.begin(), config.data.slot_size_array.begin() + slot, Key{0}));
    }
    if (sim.flow == Flow::kHotReplicas) {
      sim.hot_rows = embedding::hot_rows_of(
          embedding::make_layer_spec(nullptr, config, context.index, config.data.slot_size_array));
      sim.owner = OwnerRule::modulo(ranks);
    }
    sim.deduplicate = layer.deduplicate;
    sim.training = layer.storage.table.training;
    // all2all_dense: alltoall + 3 alltoallv; table_row_wise: alltoall and alltoallv of the keys,
    // reduce-scatter and alltoallv forward, alltoallv and all-gather backward
    sim.collectives = context.fixed ? context.fixed->collectives : sim.flow == Flow::kNodeThenCross ? 6 : 4;
    if (sim.flow == Flow::kNodeThenCross)
      place_in_nodes(sim, embedding::make_layer_spec(nullptr, config, context.index, config.data.slot_size_array),
                     ranks, per_node);
    if (sim.flow == Flow::kToOwners) {
      const embedding::LayerSpec spec =
          embedding::make_layer_spec(nullptr, config, context.index, config.data.slot_size_array);
      if (context.fixed->ownership == Ownership::kRowBlocks && !spec.key_spaces_known)
        throw InputError("layers[" + layer.name + "]: " + context.fixed_name +
                         " splits each slot's key space, which the data does not give (slot_size_array)");
      sim.owner = owner_rule(context, spec, ranks);
      sim.owner_of_slot = context.fixed_owner;
    }
    layers.push_back(std::move(sim));
  }
  return layers;
}

// One slot's occurrences in a global batch, in sample order: rank r's samples hold
// keys[first[r], first[r + 1]) (a rank's samples are contiguous).
struct SlotOccurrences {
  std::vector<Key> keys;
  std::vector<std::size_t> first;
  std::span<const Key> of(int rank) const {
    const auto r = static_cast<std::size_t>(rank);
    return std::span<const Key>(keys).subspan(first[r], first[r + 1] - first[r]);
  }
};

// Ranks per node for the link classes: --ranks-per-node, else the hardware's devices per node,
// else the ranks_per_node a layer gives (table_row_wise's), else one node of every rank.
std::int64_t ranks_per_node(const config::Config& config, const SimulationOptions& options, const PlanModel& model) {
  if (options.ranks_per_node > 0) return options.ranks_per_node;
  if (model.hardware()) return std::min<std::int64_t>(model.hardware()->devices_per_node, options.ranks);
  for (const auto& layer : config.embeddings)
    if (layer.ranks_per_node > 0) return layer.ranks_per_node;
  return options.ranks;
}

class Simulator {
 public:
  Simulator(const config::Config& config, const SimulationOptions& options)
      : config_(config), ranks_(options.ranks), model_(config, options.ranks),
        per_node_(ranks_per_node(config, options, model_)),
        layers_(simulated_layers(config, model_, options.ranks, per_node_)), links_(ranks_, per_node_) {
    const std::int64_t global = config.solver.batchsize;
    requester_.resize(static_cast<std::size_t>(global));
    samples_.assign(static_cast<std::size_t>(ranks_), 0.0);
    for (int r = 0; r < ranks_; ++r) {
      const auto share = sample_share_of(global, r, ranks_);
      std::fill_n(requester_.begin() + share.first, share.count, r);
      samples_[static_cast<std::size_t>(r)] = static_cast<double>(share.count);
    }
  }

  Simulation run(std::int64_t iterations) {
    Simulation sim;
    sim.ranks = ranks_;
    sim.ranks_per_node = per_node_;
    sim.iterations = iterations;
    sim.global_batch = config_.solver.batchsize;
    sim.cost = model_.cost();
    if (const auto* hw = model_.hardware()) sim.hardware = hw->name + " (" + hw->origin + ")";
    for (const auto& layer : layers_) {
      sim.phase_names.insert(sim.phase_names.end(), {layer.prefix + "compute", layer.prefix + "communication"});
      sim.phase_meanings.insert(
          sim.phase_meanings.end(),
          {"predicted: the rank's key, row and memory work at the cost model's rates (counted, not run)",
           "predicted: the rank's bytes on its links, waiting for the layer's slowest rank, and the layer's "
           "collective calls"});
    }
    auto source = workloads::make_batch_source(config_);
    const std::int64_t warmup = config_.solver.warmup_iter;
    const std::int64_t available = source->iterations_available(config_.solver.batchsize);
    if (available != BatchSource::kUnbounded && available < warmup + iterations)
      throw InputError("solver.max_iter: " + source->describe() + " holds " + std::to_string(available) +
                       " batches of " + std::to_string(config_.solver.batchsize) + " samples, the simulation needs " +
                       std::to_string(warmup + iterations) + " (warm-up and timed)");
    for (std::int64_t w = 1; w <= warmup; ++w) (void)source->next_batch(-w, 0, 1);  // a run's order
    for (std::int64_t it = 0; it < iterations; ++it) {
      if (const int signal = stop_signal())  // at an iteration boundary, as a run stops
        throw StopRequested("stopped by " + signal_name(signal) + " after " + std::to_string(it) + " of " +
                            std::to_string(iterations) + " iterations (no report)");
      step(source->next_batch(it, 0, 1), sim);
    }
    return sim;
  }

 private:
  void step(const Batch& batch, Simulation& sim) {
    links_.clear();
    double step_seconds = 0.0;
    std::vector<LayerCounts> counted;
    for (const auto& layer : layers_) counted.push_back(count_layer(layer, batch));
    std::vector<double> comm_sent(static_cast<std::size_t>(ranks_), 0.0), comm_recv(comm_sent);
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      const auto& layer = layers_[l];
      auto& c = counted[l];
      for (std::size_t i = 0; i < comm_sent.size(); ++i) {
        comm_sent[i] += c.comm_sent[i];
        comm_recv[i] += c.comm_recv[i];
      }
      // Each rank's time: its compute, and its bytes at its own mix of links where the hardware
      // names them (else the model's cost per byte).
      std::vector<double> compute(static_cast<std::size_t>(ranks_)), seconds(compute);
      for (int r = 0; r < ranks_; ++r) {
        const auto i = static_cast<std::size_t>(r);
        RankWork no_comm = c.work[i];
        no_comm.comm_bytes = 0.0;
        compute[i] = rank_seconds(no_comm, sim.cost);
        seconds[i] = compute[i] + c.work[i].comm_bytes * seconds_per_comm_byte(c, r, sim.cost);
      }
      const double layer_seconds =
          *std::max_element(seconds.begin(), seconds.end()) + layer.collectives * sim.cost.seconds_per_collective;
      step_seconds += layer_seconds;
      for (int r = 0; r < ranks_; ++r) {
        const auto i = static_cast<std::size_t>(r);
        sim.timings[layer.prefix + "compute"].push_back(compute[i]);
        sim.timings[layer.prefix + "communication"].push_back(layer_seconds - compute[i]);
        const auto put = [&](const std::string& name, double value) {
          sim.counters[layer.prefix + name].push_back(std::llround(value));
        };
        put("keys", c.keys[i]);
        if (layer.flow == Flow::kKeysToOwners || layer.flow == Flow::kReplicas) put("unique_keys", c.unique_keys[i]);
        else {
          put("pairs_sent", c.pairs_sent[i]);
          put("pairs_received", c.pairs_received[i]);
        }
        put("lookups", c.lookups[i]);
        if (layer.flow == Flow::kHotReplicas) {
          put("hot_keys", c.hot_keys[i]);
          put("hot_lookups", c.hot_lookups[i]);
        }
        if (layer.flow != Flow::kReplicas) {
          put("exchange_keys.bytes_sent", c.exchange_sent[i]);
          put("exchange_keys.bytes_recv", c.exchange_recv[i]);
        }
      }
    }
    for (int r = 0; r < ranks_; ++r) {
      const auto i = static_cast<std::size_t>(r);
      const auto put = [&](const std::string& name, double value) {
        sim.counters[name].push_back(std::llround(value));
      };
      put("bytes_sent", comm_sent[i]);
      put("bytes_recv", comm_recv[i]);
      put("bytes_sent_intra_node", links_.sent_intra[i]);
      put("bytes_sent_inter_node", links_.sent_inter[i]);
    }
    sim.step_time.push_back(step_seconds);
  }

  // A byte sent or received by rank r in a layer: half a byte's time on each link, in the mix of
  // links the layer's bytes took on that rank (counted) where a hardware description gives the
  // links; else the model's cost per byte.
  double seconds_per_comm_byte(const LayerCounts& c, int r, const CostParameters& cost) const {
    const auto* hw = model_.hardware();
    const auto i = static_cast<std::size_t>(r);
    if (!hw || ranks_ == 1 || c.link_bytes[i] <= 0) return cost.seconds_per_comm_byte;
    const double inside = c.intra_bytes[i] / c.link_bytes[i];
    return 0.5 * (inside / hw->intra_node.bandwidth + (1.0 - inside) / hw->inter_node.bandwidth);
  }

  // The occurrences of the Data layer's slot `slot` in `batch`, with their requesters.
  SlotOccurrences occurrences(const Batch& batch, std::int32_t slot) const {
    SlotOccurrences out;
    out.first.assign(static_cast<std::size_t>(ranks_) + 1, 0);
    for (std::int64_t s = 0; s < batch.num_samples; ++s) {
      const auto bag = batch.bag(s * batch.num_slots + slot);
      out.keys.insert(out.keys.end(), bag.begin(), bag.end());
      out.first[static_cast<std::size_t>(requester_[static_cast<std::size_t>(s)]) + 1] += bag.size();
    }
    std::partial_sum(out.first.begin(), out.first.end(), out.first.begin());
    return out;
  }

  LayerCounts count_layer(const SimulatedLayer& layer, const Batch& batch) {
    LayerCounts c(ranks_);
    const auto& context = *layer.context;
    for (int r = 0; r < ranks_; ++r) {  // the step's bytes before this layer's
      c.link_bytes[static_cast<std::size_t>(r)] = -links_.all(r);
      c.intra_bytes[static_cast<std::size_t>(r)] = -links_.intra(r);
    }
    const std::vector<double> ones(static_cast<std::size_t>(ranks_), 1.0);
    const std::vector<double> count_bytes(static_cast<std::size_t>(ranks_), kCountBytes);
    // The alltoall of counts before the key exchange: a count to every other rank.
    if (layer.flow != Flow::kReplicas && ranks_ > 1) {
      links_.add_product(ones, count_bytes);
      for (auto& v : c.exchange_sent) v += kCountBytes * (ranks_ - 1);
      for (auto& v : c.exchange_recv) v += kCountBytes * (ranks_ - 1);
    }
    for (std::size_t p = 0; p < layer.slots.size(); ++p) {
      const auto occ = occurrences(batch, layer.slots[p]);
      for (int r = 0; r < ranks_; ++r) c.keys[static_cast<std::size_t>(r)] += static_cast<double>(occ.of(r).size());
      std::vector<RankLoad> loads(static_cast<std::size_t>(ranks_));
      double batch_distinct = 0.0;
      switch (layer.flow) {
        case Flow::kToOwners:
        case Flow::kNodeThenCross:
          batch_distinct = count_to_owners(layer, static_cast<std::int32_t>(p), occ, c, loads);
          break;
        case Flow::kEveryRank: batch_distinct = count_every_rank(occ, c, loads); break;
        case Flow::kReplicas: batch_distinct = count_replicas(layer, occ, c, loads); break;
        case Flow::kHotReplicas: batch_distinct = count_hot_replicas(layer, p, occ, c, loads); break;
        case Flow::kKeysToOwners: count_keys_to_owners(layer, occ, c); continue;  // its own work model, below
      }
      if (context.owners_read_every_pair && layer.flow != Flow::kReplicas)
        for (auto& load : loads) load.distinct = load.pairs;
      for (int r = 0; r < ranks_; ++r) {
        const auto i = static_cast<std::size_t>(r);
        c.lookups[i] += loads[i].lookups();
        if (layer.flow != Flow::kReplicas) c.pairs_received[i] += loads[i].pairs;
      }
      if (layer.flow == Flow::kNodeThenCross) continue;  // its own work model, below
      TableModel table;
      table.slot = layer.slots[p];
      table.rows = layer.sizes[p];
      table.hot_rows = layer.hot_rows.empty() ? 0 : layer.hot_rows[p];
      table.bag_size = static_cast<double>(occ.keys.size()) / static_cast<double>(config_.solver.batchsize);
      const int owner = layer.owner_of_slot.empty() ? 0 : layer.owner_of_slot[p];
      if (context.fixed->ownership == Ownership::kOneRank) loads = {loads[static_cast<std::size_t>(owner)]};
      add_table_work(*context.fixed, context.shape, table, loads, batch_distinct, owner, c.work);
    }
    add_output_bytes(layer, c);
    for (std::size_t i = 0; i < c.comm_sent.size(); ++i) {  // the key exchange is counted as it travels
      c.comm_sent[i] += c.exchange_sent[i];
      c.comm_recv[i] += c.exchange_recv[i];
    }
    for (int r = 0; r < ranks_; ++r) {
      c.link_bytes[static_cast<std::size_t>(r)] += links_.all(r);
      c.intra_bytes[static_cast<std::size_t>(r)] += links_.intra(r);
    }
    if (layer.flow == Flow::kKeysToOwners) add_keys_to_owners_work(layer, c);
    if (layer.flow == Flow::kNodeThenCross) add_node_then_cross_work(layer, c);
    return c;
  }

  // Pairs to the owner of each key: the owner's distinct keys are the batch's distinct keys of the
  // slot grouped by owner (the rule and KeyRouter a run routes with).
  double count_to_owners(const SimulatedLayer& layer, std::int32_t position, const SlotOccurrences& occ, LayerCounts& c,
                         std::vector<RankLoad>& loads) {
    const OwnerRule& rule = *layer.owner;
    router_.route(
        std::span<const Key>(occ.keys), ranks_, [&](Key key) { return rule(key, position); }, routed_);
    owner_at_.resize(routed_.send_keys.size());
    std::size_t at = 0;
    for (int r = 0; r < ranks_; ++r) {
      loads[static_cast<std::size_t>(r)].distinct =
          static_cast<double>(routed_.send_counts[static_cast<std::size_t>(r)]);
      for (std::size_t n = 0; n < routed_.send_counts[static_cast<std::size_t>(r)]; ++n) owner_at_[at++] = r;
    }
    for (int from = 0; from < ranks_; ++from) {
      const auto f = static_cast<std::size_t>(from);
      c.pairs_sent[f] += static_cast<double>(occ.first[f + 1] - occ.first[f]);
      for (std::size_t k = occ.first[f]; k < occ.first[f + 1]; ++k) {
        const int owner = ranks_ == 1 ? 0 : owner_at_[routed_.inverse[k]];
        loads[static_cast<std::size_t>(owner)].pairs += 1.0;
        if (owner == from) continue;
        links_.add(from, owner, kPairBytes);
        c.exchange_sent[f] += kPairBytes;
        c.exchange_recv[static_cast<std::size_t>(owner)] += kPairBytes;
      }
    }
    return static_cast<double>(routed_.send_keys.size());
  }

  // hot_replicated: each rank's hot keys (below the slot's hot_rows in its key space) read from
  // its replica, de-duplicated per rank; the cold ones to key % ranks as count_to_owners counts
  // them. Returns the distinct hot keys of the global batch (every rank updates them).
  double count_hot_replicas(const SimulatedLayer& layer, std::size_t position, const SlotOccurrences& occ,
                            LayerCounts& c, std::vector<RankLoad>& loads) {
    const Key first = layer.offsets[position], hot_end = first + layer.hot_rows[position];
    SlotOccurrences cold;
    cold.first.assign(occ.first.size(), 0);
    std::vector<Key> hot;
    std::vector<RankLoad> replica(static_cast<std::size_t>(ranks_));
    for (int r = 0; r < ranks_; ++r) {
      const auto i = static_cast<std::size_t>(r);
      const std::size_t hot_before = hot.size();
      for (const Key key : occ.of(r)) (key < hot_end ? hot : cold.keys).push_back(key);
      cold.first[i + 1] = cold.keys.size();
      const auto mine = std::span<const Key>(hot).subspan(hot_before);
      router_.route(
          mine, 1, [](Key) { return 0; }, routed_);
      replica[i] = {0.0, 0.0, static_cast<double>(mine.size()), static_cast<double>(routed_.send_keys.size())};
      c.hot_keys[i] += replica[i].replica_pairs;
      c.hot_lookups[i] += replica[i].replica_distinct;
    }
    router_.route(
        std::span<const Key>(hot), 1, [](Key) { return 0; }, routed_);
    const auto batch_hot = static_cast<double>(routed_.send_keys.size());
    count_to_owners(layer, static_cast<std::int32_t>(position), cold, c, loads);
    for (std::size_t i = 0; i < loads.size(); ++i) {
      loads[i].replica_pairs = replica[i].replica_pairs;
      loads[i].replica_distinct = replica[i].replica_distinct;
    }
    return batch_hot;
  }

  // Every pair to every rank (each pools its columns of every bag).
  double count_every_rank(const SlotOccurrences& occ, LayerCounts& c, std::vector<RankLoad>& loads) {
    router_.route(
        std::span<const Key>(occ.keys), 1, [](Key) { return 0; }, routed_);
    const auto distinct = static_cast<double>(routed_.send_keys.size());
    std::vector<double> local(static_cast<std::size_t>(ranks_), 0.0);
    for (int r = 0; r < ranks_; ++r) local[static_cast<std::size_t>(r)] = static_cast<double>(occ.of(r).size());
    std::vector<double> pair_bytes(local.size());
    for (std::size_t r = 0; r < local.size(); ++r) {
      pair_bytes[r] = local[r] * kPairBytes;
      c.pairs_sent[r] += local[r] * ranks_;
      c.exchange_sent[r] += pair_bytes[r] * (ranks_ - 1);
      c.exchange_recv[r] += (static_cast<double>(occ.keys.size()) - local[r]) * kPairBytes;
      loads[r] = {static_cast<double>(occ.keys.size()), distinct};
    }
    links_.add_product(pair_bytes, std::vector<double>(local.size(), 1.0));
    return distinct;
  }

  // Replicas: each rank looks up its own distinct keys (data_parallel de-duplicates the rank's
  // whole batch; keys of different slots never coincide, so slot by slot is the same count).
  double count_replicas(const SimulatedLayer& layer, const SlotOccurrences& occ, LayerCounts& c,
                        std::vector<RankLoad>& loads) {
    router_.route(
        std::span<const Key>(occ.keys), 1, [](Key) { return 0; }, routed_);
    const auto batch_distinct = static_cast<double>(routed_.send_keys.size());
    for (int r = 0; r < ranks_; ++r) {
      const auto mine = occ.of(r);
      router_.route(
          mine, 1, [](Key) { return 0; }, routed_,
          layer.deduplicate ? Deduplication::kOn : Deduplication::kOff);  // off: every occurrence is read
      const auto i = static_cast<std::size_t>(r);
      loads[i] = {static_cast<double>(mine.size()), static_cast<double>(routed_.send_keys.size())};
      c.unique_keys[i] += loads[i].distinct;
    }
    return batch_distinct;
  }

  // all2all_dense: each rank routes its keys (de-duplicated unless the layer says not) to
  // key % ranks; an owner reads the distinct keys it received.
  void count_keys_to_owners(const SimulatedLayer& layer, const SlotOccurrences& occ, LayerCounts& c) {
    const int ranks = ranks_;
    const auto modulo = [ranks](Key key) { return static_cast<int>(key % ranks); };
    router_.route(std::span<const Key>(occ.keys), ranks_, modulo, routed_);
    for (int r = 0; r < ranks_; ++r)
      c.lookups[static_cast<std::size_t>(r)] += static_cast<double>(routed_.send_counts[static_cast<std::size_t>(r)]);
    // Each rank's keys as it sends them (distinct, unless the layer says not), each to key % P:
    // the same keys a P-way routing groups, counted key by key (grouping every rank's keys P
    // ways would cost O(P) a rank, O(P^2) a step).
    const double row = kFloatBytes * context_dim(layer);
    for (int r = 0; r < ranks_; ++r) {
      std::span<const Key> sent = occ.of(r);
      if (layer.deduplicate) {
        router_.route(
            sent, 1, [](Key) { return 0; }, routed_);
        sent = routed_.send_keys;
      }
      const auto i = static_cast<std::size_t>(r);
      c.unique_keys[i] += static_cast<double>(sent.size());
      for (const Key key : sent) {
        const int d = modulo(key);
        const auto o = static_cast<std::size_t>(d);
        c.pairs_received[o] += 1.0;  // keys received (the work model's)
        if (d == r) continue;
        const double grad = layer.training ? row : 0.0;  // evaluation: no backward
        links_.add(r, d, kKeyBytes + grad);              // the key out, its gradient out (backward)
        links_.add(d, r, row);                           // its row back (forward)
        c.comm_sent[o] += row;  // rows from the owner, gradients to it: alltoallv, as on the wire
        c.comm_recv[i] += row;
        c.comm_sent[i] += grad;
        c.comm_recv[o] += grad;
        c.exchange_sent[i] += kKeyBytes;
        c.exchange_recv[o] += kKeyBytes;
      }
    }
  }

  static double context_dim(const SimulatedLayer& layer) { return layer.context->shape.dim; }

  // The output collectives' bytes (they depend on the plan and the batch, not on the keys):
  // pooled vectors forward and their gradients backward, or data_parallel's allreduce. On the
  // wire (the links), and as the Communicator counts them (c.comm_*).
  void add_output_bytes(const SimulatedLayer& layer, LayerCounts& c) {
    const auto& shape = layer.context->shape;
    const auto n = static_cast<std::size_t>(ranks_);
    const double slots = static_cast<double>(layer.slots.size());
    const double row = shape.dim * kFloatBytes;
    const double global = static_cast<double>(config_.solver.batchsize);
    if (layer.flow == Flow::kReplicas) {
      if (!layer.training) return;  // evaluation: no gradient, no allreduce
      // Two allreduces (the table's fp32 gradient, its int32 touch counts), called on any count.
      double rows = 0.0;
      for (const auto size : layer.sizes) rows += static_cast<double>(size);
      const double buffer = rows * (shape.dim + 1.0) * kFloatBytes;
      for (std::size_t r = 0; r < n; ++r) {
        c.comm_sent[r] += buffer;
        c.comm_recv[r] += buffer;
      }
      // On the wire, a reduce-scatter and an all-gather: 2 (P - 1) / P of the buffer each way.
      if (ranks_ > 1) links_.add_product(std::vector<double>(n, 1.0), std::vector<double>(n, 2.0 * buffer / ranks_));
      return;
    }
    if (layer.flow == Flow::kNodeThenCross) return add_node_then_cross_bytes(layer, c);
    if (layer.flow == Flow::kHotReplicas && layer.training) {
      // The hot rows' two allreduces (fp32 gradient, int32 touch counts), called on any count.
      const double hot = std::accumulate(layer.hot_rows.begin(), layer.hot_rows.end(), 0.0);
      const double buffer = hot * (shape.dim + 1.0) * kFloatBytes;
      for (std::size_t r = 0; r < n; ++r) {
        c.comm_sent[r] += buffer;
        c.comm_recv[r] += buffer;
      }
      if (ranks_ > 1) links_.add_product(std::vector<double>(n, 1.0), std::vector<double>(n, 2.0 * buffer / ranks_));
    }
    if (ranks_ == 1 || layer.flow == Flow::kKeysToOwners) return;  // one rank: no call; all2all_dense: with the keys
    std::vector<double> ones(n, 1.0), bags(n), per_owner(n, 0.0);
    for (std::size_t r = 0; r < n; ++r) bags[r] = samples_[r] * slots * row;
    const bool whole_tables = layer.flow == Flow::kToOwners && layer.context->fixed->ownership == Ownership::kOneRank;
    if ((layer.flow == Flow::kToOwners && !whole_tables) || layer.flow == Flow::kHotReplicas) {
      // reduce-scatter of every bag's partial sums, all-gather of the gradients (training)
      links_.add_product(ones, bags);
      if (layer.training) links_.add_product(bags, ones);
      for (std::size_t r = 0; r < n; ++r) {
        c.comm_sent[r] += global * slots * row + (layer.training ? bags[r] * (ranks_ - 1.0) : 0.0);
        c.comm_recv[r] += bags[r] + (layer.training ? global * slots * row - bags[r] : 0.0);
      }
      return;
    }
    // alltoallv: an owner sends each rank its bags of the owner's tables (or its column slice of
    // every bag), and the gradients come back: bytes per sample an owner pools, times the samples.
    if (whole_tables)
      for (const auto owner : layer.owner_of_slot) per_owner[static_cast<std::size_t>(owner)] += row;
    else
      for (std::size_t r = 0; r < n; ++r)
        per_owner[r] = slots * kFloatBytes * (shape.dim / ranks_ + (static_cast<int>(r) < shape.dim % ranks_ ? 1 : 0));
    links_.add_product(per_owner, samples_);
    if (layer.training) links_.add_product(samples_, per_owner);
    const double owned_all = std::accumulate(per_owner.begin(), per_owner.end(), 0.0);
    for (std::size_t r = 0; r < n; ++r) {
      const double as_owner = per_owner[r] * (global - samples_[r]);         // its bags of the others' samples
      const double as_requester = samples_[r] * (owned_all - per_owner[r]);  // its samples' bags from the others
      c.comm_sent[r] += as_owner + (layer.training ? as_requester : 0.0);    // forward; the gradients back
      c.comm_recv[r] += as_requester + (layer.training ? as_owner : 0.0);
    }
  }

  // table_row_wise's output (pooled_output_node_then_cross.cpp), called on any count: forward a
  // reduce-scatter of the node's buffer (every bag of the node's tables) over the node's ranks,
  // which gives local rank l the bags of every node's rank l, then an alltoallv among the ranks of
  // one local index; backward the alltoallv the other way and an all-gather in the node.
  void add_node_then_cross_bytes(const SimulatedLayer& layer, LayerCounts& c) {
    const int rpn = layer.ranks_per_node, nodes = ranks_ / rpn;
    const double row = layer.context->shape.dim * kFloatBytes;
    const double global = static_cast<double>(config_.solver.batchsize);
    std::vector<double> owned(static_cast<std::size_t>(nodes), 0.0);  // tables per node
    for (const auto node : layer.node_of_slot) owned[static_cast<std::size_t>(node)] += 1.0;
    // chunk[n * rpn + l]: bytes of local rank l's chunk on node n (the bags of every node's rank l).
    std::vector<double> chunk(static_cast<std::size_t>(ranks_), 0.0);
    for (int n = 0; n < nodes; ++n)
      for (int l = 0; l < rpn; ++l)
        for (int m = 0; m < nodes; ++m)
          chunk[static_cast<std::size_t>(n * rpn + l)] +=
              samples_[static_cast<std::size_t>(m * rpn + l)] * owned[static_cast<std::size_t>(n)] * row;
    const double back = layer.training ? 1.0 : 0.0;  // evaluation: forward only
    for (int r = 0; r < ranks_; ++r) {
      const auto i = static_cast<std::size_t>(r);
      const int node = r / rpn, local = r % rpn;
      const double mine = chunk[i];
      double node_others = 0.0;  // the chunks of the node's other ranks
      for (int l = 0; l < rpn; ++l) {
        if (l == local) continue;
        const int peer = node * rpn + l;
        node_others += chunk[static_cast<std::size_t>(peer)];
        // reduce-scatter: the peer's share; all-gather (backward): this rank's chunk
        links_.add(r, peer, chunk[static_cast<std::size_t>(peer)] + back * mine);
      }
      c.comm_sent[i] += global * owned[static_cast<std::size_t>(node)] * row + back * mine * (rpn - 1);
      c.comm_recv[i] += mine + back * node_others;
      for (int m = 0; m < nodes; ++m) {  // across nodes, among the ranks of this local index
        if (m == node) continue;
        const int peer = m * rpn + local;
        const double bags_to_peer =
            samples_[static_cast<std::size_t>(peer)] * owned[static_cast<std::size_t>(node)] * row;
        const double bags_from_peer = samples_[i] * owned[static_cast<std::size_t>(m)] * row;
        links_.add(r, peer, bags_to_peer + back * bags_from_peer);  // the gradients of its bags go back
        c.comm_sent[i] += bags_to_peer + back * bags_from_peer;
        c.comm_recv[i] += bags_from_peer + back * bags_to_peer;
      }
    }
  }

  // table_row_wise's step in the cost model's terms, as add_table_work charges row_wise: routing
  // per key and pooling per pair, reads and updates per distinct row, the node's reduction, the
  // bytes it put on its links (counted).
  void add_node_then_cross_work(const SimulatedLayer& layer, LayerCounts& c) {
    const auto& shape = layer.context->shape;
    const double row_values = shape.dim + shape.state_width;
    const double global = static_cast<double>(config_.solver.batchsize);
    const double loss_bytes = 2.0 * global * shape.dim * kFloatBytes / ranks_;
    const double rpn = layer.ranks_per_node;
    std::vector<double> owned(static_cast<std::size_t>(ranks_ / layer.ranks_per_node), 0.0);
    for (const auto node : layer.node_of_slot) owned[static_cast<std::size_t>(node)] += 1.0;
    for (int r = 0; r < ranks_; ++r) {
      const auto i = static_cast<std::size_t>(r);
      const double node_buffer =
          global * owned[static_cast<std::size_t>(r / layer.ranks_per_node)] * shape.dim * kFloatBytes;
      auto& w = c.work[i];
      w.key_ops += c.keys[i] + c.pairs_received[i];
      w.row_ops += 2.0 * c.lookups[i];
      w.memory_bytes += 2.0 * c.pairs_received[i] * shape.dim * kFloatBytes +
                        c.lookups[i] * (shape.dim + 2.0 * row_values) * shape.value_bytes +
                        2.0 * node_buffer * (rpn - 1.0) / rpn + loss_bytes;
      w.comm_bytes += c.link_bytes[i];
    }
  }

  // all2all_dense's step in the cost model's terms, as add_table_work charges a pooled scheme:
  // routing and pooling per key occurrence and per received key, reads and updates per distinct
  // row, the rows received and sent, the bytes on the wire.
  void add_keys_to_owners_work(const SimulatedLayer& layer, LayerCounts& c) {
    const auto& shape = layer.context->shape;
    const double row_values = shape.dim + shape.state_width;
    const double loss_bytes = 2.0 * static_cast<double>(config_.solver.batchsize) * shape.dim * kFloatBytes / ranks_;
    for (int r = 0; r < ranks_; ++r) {
      const auto i = static_cast<std::size_t>(r);
      auto& w = c.work[i];
      w.key_ops += c.keys[i] + c.pairs_received[i];
      w.row_ops += 2.0 * c.lookups[i];
      w.memory_bytes += 2.0 * (c.keys[i] + c.pairs_received[i]) * shape.dim * kFloatBytes +
                        c.lookups[i] * (shape.dim + 2.0 * row_values) * shape.value_bytes + loss_bytes;
      w.comm_bytes += c.link_bytes[i];
    }
  }

  const config::Config& config_;
  int ranks_;
  PlanModel model_;
  std::int64_t per_node_;
  std::vector<SimulatedLayer> layers_;
  Links links_;
  std::vector<int> requester_;   // per global sample
  std::vector<double> samples_;  // per rank
  KeyRouter router_;
  RoutedKeys routed_;
  std::vector<int> owner_at_;
};

}  // namespace

std::string simulated_scheme_names() { return embedding::scheme_names_where(is_simulated); }

Simulation simulate(const config::Config& config, const SimulationOptions& options) {
  if (options.ranks < 1) throw InputError("--ranks: expected at least 1 rank, got " + std::to_string(options.ranks));
  if (options.ranks_per_node < 0)
    throw InputError("--ranks-per-node: expected a positive count, got " + std::to_string(options.ranks_per_node));
  if (!config.data.key_spaces_known())
    throw InputError("layers[" + config.data.name +
                     "].slot_size_array: simulate needs each slot's key space (the tables the planner models), and "
                     "this data gives none (a Norm trace without slot_size_array): add it to the Data layer");
  const std::int64_t iterations = options.iterations > 0 ? options.iterations : config.solver.max_iter;
  Simulator simulator(config, options);
  return simulator.run(iterations);
}

}  // namespace embscale::plan
