#include "plan/plan_model.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <sstream>
#include <tuple>

#include "core/error.hpp"
#include "embedding/engine.hpp"
#include "embedding/pooled_scheme.hpp"
#include "embedding/scheme_registry.hpp"
#include "embedding/sparse_optimizer.hpp"
#include "kv/value_types.hpp"
#include "plan/hardware_costs.hpp"
#include "plan/memory_model.hpp"

namespace embscale::plan {
namespace {

std::string gib(double bytes) {
  std::ostringstream out;
  out.precision(3);
  out << bytes / double(1 << 30) << " GiB";
  return out.str();
}

// planner.schemes names only schemes the planner may choose.
void check_scheme_names(const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (choosable_scheme(names[i])) continue;
    std::string known;
    for (const auto& model : planned_schemes())
      known += (known.empty() ? "\"" : ", \"") + std::string(model.name) + "\"";
    throw InputError("planner.schemes[" + std::to_string(i) + "]: expected one of " + known +
                     " (the schemes the planner models), got \"" + names[i] + "\"");
  }
}

// Whether the scheme's own check accepts the layer on `ranks` ranks.
bool accepts(const embedding::SchemeEntry& entry, const embedding::LayerSpec& spec, int ranks) {
  if (!entry.check) return true;
  try {
    entry.check(spec, ranks);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

}  // namespace

int placed_unit(const LayerContext& context, const SchemeModel& model) {
  if (model.ownership == Ownership::kOneRank) return 1;
  if (model.ownership == Ownership::kNodeRowBlocks) return context.shape.ranks_per_node;
  return 0;
}

PlanModel::PlanModel(const config::Config& config, int ranks) : config_(config), ranks_(ranks) {
  const auto* settings = config.planner ? &*config.planner : nullptr;
  hardware_ = plan_hardware(config);
  cost_ = cost_parameters(settings, hardware(), ranks);
  memory_limit_ = settings && settings->memory_per_rank > 0 ? settings->memory_per_rank
                  : hardware_                               ? hardware_->device_memory_bytes
                                                            : default_memory_per_rank(ranks);
  for (std::size_t i = 0; i < config.embeddings.size(); ++i) contexts_.push_back(make_context(i, settings));
  // The skew-aware loads of a slot without an analytic model are measured on the data.
  measured_.assign(config.data.slot_size_array.size(), false);
  for (const auto& context : contexts_) {
    if (!context.skew_aware) continue;
    for (const auto slot : context.layer->slots) {
      std::string why_not;
      if (measured_[static_cast<std::size_t>(slot)] || has_skew_model(config, slot, why_not)) continue;
      measured_[static_cast<std::size_t>(slot)] = true;
      measured_slots_.push_back(slot);
      measured_reasons_.push_back(why_not);
    }
  }
}

LayerContext PlanModel::make_context(std::size_t i, const config::PlannerSettings* settings) {
  LayerContext context;
  context.index = i;
  context.layer = &config_.embeddings[i];
  const auto& layer = *context.layer;
  context.planned = config::is_auto_sharding(layer.sharding) || (settings && settings->all_layers);
  context.skew_aware = layer.sharding != config::kAutoSkewBlindSharding;
  const std::int32_t dim = layer.embedding_vec_size;
  const bool training = layer.storage.table.training;
  const auto state = [&](std::int32_t width) {
    return training ? embedding::make_sparse_optimizer(layer.optimizer, width)->state_width() : 0;
  };
  context.shape.samples = config_.solver.batchsize;
  context.shape.ranks = ranks_;
  context.shape.dim = dim;
  context.shape.state_width = state(dim);
  context.shape.column_state_width = state(std::max(1, dim / ranks_));
  context.shape.value_bytes = static_cast<double>(kv::value_bytes(layer.storage.table.value_type));
  context.shape.ranks_per_node = node_ranks(layer);
  context.row_bytes = (dim + context.shape.state_width) * context.shape.value_bytes;
  // The memory of a column shard is the widest one's (the first dim % ranks ranks store a column
  // more): the fullest rank is what the memory limit bounds (embedding/memory_need.hpp agrees).
  const std::int32_t widest = std::max(1, (dim + ranks_ - 1) / ranks_);
  context.column_row_bytes = (widest + state(widest)) * context.shape.value_bytes;
  context.owners_read_every_pair =
      !training && !layer.storage.dynamic && layer.storage.table.value_type == kv::ValueType::kFloat32;
  const std::string path = "layers[" + layer.name + "]";
  // The layer as the engine would see it (no communicator: the checks need none).
  const embedding::LayerSpec spec = embedding::make_layer_spec(nullptr, config_, i, config_.data.slot_size_array);
  if (context.planned) {
    for (const auto& model : planned_schemes()) {
      if (settings && !settings->schemes.empty() &&
          std::find(settings->schemes.begin(), settings->schemes.end(), model.name) == settings->schemes.end())
        continue;
      if (model.static_only && layer.storage.dynamic) continue;
      if (!accepts(*model.entry, spec, ranks_)) continue;  // column_wise: a column per rank
      if (model.ownership == Ownership::kNodeRowBlocks && ranks_ % context.shape.ranks_per_node != 0) continue;
      context.candidates.push_back(&model);
    }
    if (settings) check_scheme_names(settings->schemes);
    if (context.candidates.empty())
      throw InputError(path +
                       ": no scheme the planner may choose can run this layer (planner.schemes; column_wise "
                       "and data_parallel need static storage, column_wise a column per rank)");
    return context;
  }
  const auto& entry = embedding::scheme_of(layer);
  context.fixed_name = entry.name;
  context.fixed = planned_scheme(entry.name);
  if (context.fixed && entry.table_owners) context.fixed_owner = entry.table_owners(spec, ranks_);
  if (context.fixed && context.fixed->ownership == Ownership::kNodeRowBlocks) {
    // Each table's node, as the scheme places it. Not predicted: nodes that do not split the
    // ranks, and table_nodes for the hosts' nodes (no ranks_per_node), whose size is not known here.
    if (ranks_ % context.shape.ranks_per_node != 0 || (layer.ranks_per_node == 0 && !layer.table_nodes.empty()))
      context.fixed = nullptr;
    else context.fixed_owner = embedding::table_nodes(spec, ranks_ / context.shape.ranks_per_node);
  }
  return context;  // predicted skew-aware: analytic where the slots have a model, else measured
}

int PlanModel::node_ranks(const config::EmbeddingLayer& layer) const {
  if (layer.ranks_per_node > 0) return layer.ranks_per_node;
  if (hardware_) return static_cast<int>(std::min<std::int64_t>(hardware_->devices_per_node, ranks_));
  return ranks_;
}

const LayerContext* PlanModel::context_of(bool aware, std::int32_t slot) const {
  for (const auto& context : contexts_) {
    const auto& slots = context.layer->slots;
    if (context.skew_aware == aware && std::find(slots.begin(), slots.end(), slot) != slots.end()) return &context;
  }
  return nullptr;
}

bool PlanModel::measured(bool aware, std::int32_t slot) const {
  return aware && measured_[static_cast<std::size_t>(slot)];
}

const LoadSample& PlanModel::sample() {
  if (!sample_) {
    const bool dynamic =
        std::any_of(contexts_.begin(), contexts_.end(), [](const LayerContext& c) { return c.layer->storage.dynamic; });
    sample_.emplace(config_, ranks_, measured_slots_, dynamic);
  }
  return *sample_;
}

const TableModel& PlanModel::table(bool aware, std::int32_t slot) {
  auto key = std::make_pair(aware, slot);
  auto it = tables_.find(key);
  if (it == tables_.end()) {
    // A measured slot: the sizes of the skew-blind model, the bag size measured.
    auto model = table_model(config_, slot, aware && !measured(aware, slot));
    if (measured(aware, slot)) model.bag_size = sample().bag_size(slot);
    model.hot_rows = hot_rows(aware, slot, model);
    if (const auto* context = context_of(aware, slot)) model.ranks_per_node = context->shape.ranks_per_node;
    it = tables_.emplace(key, std::move(model)).first;
  }
  return it->second;
}

std::int64_t PlanModel::hot_rows(bool aware, std::int32_t slot, const TableModel& table) const {
  const auto* context = context_of(aware, slot);
  if (!context) return 0;
  const auto& slots = context->layer->slots;
  const auto position = static_cast<std::size_t>(std::find(slots.begin(), slots.end(), slot) - slots.begin());
  if (context->fixed && context->fixed->ownership == Ownership::kHotReplicas)  // the layer's, or the default
    return embedding::hot_rows_of(
        embedding::make_layer_spec(nullptr, config_, context->index, config_.data.slot_size_array))[position];
  const bool may_choose = std::any_of(context->candidates.begin(), context->candidates.end(),
                                      [](const SchemeModel* m) { return m->ownership == Ownership::kHotReplicas; });
  // A measured slot has no popularity to rank its rows by: none is replicated.
  if (context->planned && may_choose && !measured(aware, slot))
    return worthwhile_hot_rows(table, context->shape, cost_);
  return 0;
}

const std::vector<RankLoad>& PlanModel::loads(bool aware, std::int32_t slot, Ownership ownership) {
  auto key = std::make_tuple(aware, slot, static_cast<int>(ownership));
  auto it = loads_.find(key);
  if (it == loads_.end()) {
    std::vector<RankLoad> computed;
    if (!measured(aware, slot)) {
      computed = expected_loads(table(aware, slot), ownership, ranks_, config_.solver.batchsize);
    } else if (ownership == Ownership::kHotReplicas) {  // a measured slot replicates no rows (hot_rows)
      computed = sample().loads(slot, Ownership::kKeyModulo);
    } else if (ownership == Ownership::kNodeRowBlocks) {  // the P row blocks gathered into the node's
      const auto blocks = sample().loads(slot, Ownership::kRowBlocks);
      computed.assign(blocks.size(), {});
      const int per = ranks_ / table(aware, slot).ranks_per_node;
      for (std::size_t r = 0; r < blocks.size(); ++r) {
        computed[r / static_cast<std::size_t>(per)].pairs += blocks[r].pairs;
        computed[r / static_cast<std::size_t>(per)].distinct += blocks[r].distinct;
      }
    } else {
      computed = sample().loads(slot, ownership);
    }
    it = loads_.emplace(key, std::move(computed)).first;
  }
  return it->second;
}

const std::vector<RankLoad>& PlanModel::owner_loads(const LayerContext& context, const SchemeModel& model,
                                                    std::int32_t slot) {
  const auto& given = loads(context.skew_aware, slot, model.ownership);
  if (!context.owners_read_every_pair || model.ownership == Ownership::kReplicas) return given;
  auto key = std::make_tuple(context.skew_aware, slot, static_cast<int>(model.ownership));
  auto it = pair_loads_.find(key);
  if (it == pair_loads_.end()) {
    auto every_pair = given;
    for (auto& load : every_pair) load.distinct = load.pairs;
    it = pair_loads_.emplace(key, std::move(every_pair)).first;
  }
  return it->second;
}

// add_table_work with the table's loads under the scheme's ownership.
void PlanModel::add_work(const LayerContext& context, const SchemeModel& model, std::int32_t slot, int owner,
                         std::vector<RankWork>& work) {
  // The global batch's distinct keys (kHotReplicas: its hot ones, those of one rank's replica
  // drawing the whole batch).
  const double batch_distinct = model.ownership == Ownership::kHotReplicas
                                    ? hot_replica_distinct(context.skew_aware, slot)
                                    : loads(context.skew_aware, slot, Ownership::kOneRank)[0].distinct;
  add_table_work(model, context.shape, table(context.skew_aware, slot), owner_loads(context, model, slot),
                 batch_distinct, owner, work);
}

double PlanModel::hot_replica_distinct(bool aware, std::int32_t slot) {
  const auto& model = table(aware, slot);
  if (model.hot_rows == 0 || measured(aware, slot)) return 0.0;
  return expected_loads(model, Ownership::kHotReplicas, 1, config_.solver.batchsize)[0].replica_distinct;
}

// A dynamic table's distinct keys per rank over the run (warm-up and timed steps).
const std::vector<double>& PlanModel::run_keys(bool aware, std::int32_t slot, Ownership ownership) {
  auto key = std::make_tuple(aware, slot, static_cast<int>(ownership));
  auto it = run_keys_.find(key);
  if (it == run_keys_.end()) {
    const auto steps = static_cast<std::int64_t>(run_steps());
    std::vector<double> keys;
    if (measured(aware, slot)) {
      // Measured over the sample's batches; a longer run is extrapolated linearly, up to the
      // keys the rank owns (an upper bound: the memory plan errs on the safe side).
      if (ownership == Ownership::kNodeRowBlocks) {  // the P row blocks gathered into the node's
        const auto blocks = sample().distinct_over_sample(slot, Ownership::kRowBlocks);
        keys.assign(blocks.size(), 0.0);
        const int per = ranks_ / table(aware, slot).ranks_per_node;
        for (std::size_t r = 0; r < blocks.size(); ++r) keys[r / static_cast<std::size_t>(per)] += blocks[r];
      } else {
        keys = sample().distinct_over_sample(slot, ownership);
      }
      const auto owned = owned_rows(table(aware, slot), ownership, ranks_);
      const double scale = std::max(1.0, static_cast<double>(steps) / static_cast<double>(sample().batches()));
      for (std::size_t r = 0; r < keys.size(); ++r) keys[r] = std::min(keys[r] * scale, static_cast<double>(owned[r]));
    } else {
      keys = distinct_over_run(table(aware, slot), ownership, ranks_, config_.solver.batchsize, steps);
    }
    it = run_keys_.emplace(key, std::move(keys)).first;
  }
  return it->second;
}

void PlanModel::add_fast_tier(const LayerContext& context, const std::vector<const Choice*>& choices,
                              const std::vector<double>& keys, PlannedLayer& layer) {
  const auto& storage = context.layer->storage;
  const auto ranks = static_cast<std::size_t>(ranks_);
  layer.fast_tier.assign(ranks, {});
  layer.slow_memory_bytes.assign(ranks, 0.0);
  bool unmodelled = false;
  for (const auto* choice : choices)
    if (measured(context.skew_aware, choice->slot)) {
      layer.tier_note = "slot " + std::to_string(choice->slot) +
                        "'s loads are measured (no popularity model): the fast tier is not predicted, every "
                        "lookup taken as a miss";
      unmodelled = true;
      break;
    }
  // A miss reads its row from the slow tier; in training it goes back there too (caching: demoted
  // when evicted; hybrid: written by the update).
  const double moved_per_miss = context.row_bytes * (storage.table.training ? 2.0 : 1.0);
  // Ranks with the same slots, owned shares and draws have the same fast tier (every rank under
  // key modulo): predicted once.
  std::map<std::vector<std::tuple<std::int32_t, double, double>>, TierPrediction> predicted;
  for (std::size_t r = 0; r < ranks; ++r) {
    std::vector<TierSlot> slots;
    std::vector<std::tuple<std::int32_t, double, double>> signature;
    for (const auto* choice : choices) {
      const auto& model_table = table(context.skew_aware, choice->slot);
      const double draws = static_cast<double>(context.shape.samples) * model_table.bag_size;
      TierSlot slot{&model_table.popularity, 1.0, draws};
      switch (choice->scheme->ownership) {
        case Ownership::kOneRank:
          if (static_cast<int>(r) != choice->owner) continue;
          break;
        case Ownership::kNodeRowBlocks:  // a block of the table on each of its node's ranks
          if (static_cast<int>(r) / context.shape.ranks_per_node != choice->owner) continue;
          slot.owned_fraction = 1.0 / context.shape.ranks_per_node;
          break;
        case Ownership::kReplicas: slot.draws = draws / ranks_; break;  // its own samples' keys
        case Ownership::kEveryRank: break;                              // every key, a slice of each row
        case Ownership::kRowBlocks:
        case Ownership::kKeyModulo:
        case Ownership::kHotReplicas: slot.owned_fraction = 1.0 / ranks_; break;  // a 1/P share of the keys
      }
      slots.push_back(slot);
      signature.emplace_back(choice->slot, slot.owned_fraction, slot.draws);
    }
    TierPrediction p;
    if (unmodelled) {
      for (const auto& slot : slots)
        p.lookups += slot.owned_fraction * slot.popularity->expected_distinct(0, slot.popularity->keys(), slot.draws);
      p.misses = p.lookups;
      p.hit_rate = p.lookups > 0.0 ? 0.0 : 1.0;
    } else {
      auto [it, inserted] = predicted.try_emplace(signature);
      if (inserted) {
        std::string note;
        it->second = predict_fast_tier(storage, context.row_bytes, slots, run_steps(), note);
        if (!note.empty()) layer.tier_note = note;
        if (it->second.below_one_step)
          layer.tier_note =
              "the fast tier holds fewer rows than a step's distinct keys: taken as a random part of the "
              "last step's keys, an upper bound (lib/plan/tier_model.hpp)";
      }
      p = it->second;
    }
    layer.fast_tier[r] = p;
    // The fast tier's table holds what fits of the rank's keys; the slow tier the rest.
    const double fast_keys = fast_tier_shape(storage, context.row_bytes).keys_held(keys[r]);
    layer.memory_bytes[r] += fast_tier_bytes(storage, keys[r], context.row_bytes);
    layer.slow_memory_bytes[r] = (keys[r] - fast_keys) * context.row_bytes;
    layer.work[r].slow_tier_bytes += p.misses * moved_per_miss;
  }
}

void PlanModel::check_fast_tier(const PlannedLayer& layer, std::vector<double>& slow_memory,
                                std::string& shortfall) const {
  const auto* settings = config_.planner ? &*config_.planner : nullptr;
  for (std::size_t r = 0; r < layer.fast_tier.size(); ++r) {
    slow_memory[r] += layer.slow_memory_bytes[r];
    if (!shortfall.empty()) continue;
    if (settings && settings->target_hit_rate && layer.fast_tier[r].lookups > 0.0 &&
        layer.fast_tier[r].hit_rate < *settings->target_hit_rate) {
      std::ostringstream out;
      out.precision(4);
      out << "layers[" << layer.source_layer
          << "].storage.global_hbm_for_values: the fast tier's predicted hit rate on rank " << r << " is "
          << layer.fast_tier[r].hit_rate << ", below planner.target_hit_rate " << *settings->target_hit_rate << " ("
          << to_string(layer.fast_tier[r].retention) << ")";
      shortfall = out.str();
    }
    const auto* hw = hardware();
    if (hw && hw->host_memory_bytes > 0) {
      const double per_device = static_cast<double>(hw->host_memory_bytes) / static_cast<double>(hw->devices_per_node);
      if (slow_memory[r] > per_device)
        shortfall = "rank " + std::to_string(r) + "'s slow tiers need " + gib(slow_memory[r]) + ", more than its " +
                    gib(per_device) + " share of the node's host memory (" + hw->origin +
                    ": node.host_memory_bytes / " + "node.devices)";
    }
  }
}

// The planned layers of `choices` with their predictions, and whether they fit.
Evaluation PlanModel::evaluate(const std::vector<Choice>& choices, bool detail) {
  Evaluation result;
  result.seconds = 0.0;
  std::vector<double> memory(static_cast<std::size_t>(ranks_), 0.0);
  std::vector<std::int32_t> largest_slot(static_cast<std::size_t>(ranks_), -1);
  std::vector<double> largest_bytes(static_cast<std::size_t>(ranks_), 0.0);
  std::string vocabulary_shortfall, tier_shortfall;
  std::vector<double> slow_memory(static_cast<std::size_t>(ranks_), 0.0);
  for (std::size_t c = 0; c < contexts_.size(); ++c) {
    const auto& context = contexts_[c];
    std::vector<double> layer_rows(static_cast<std::size_t>(ranks_), 0.0);
    const auto group_of = [&](const SchemeModel* model) {
      PlannedLayer group;
      group.source_layer = context.layer->name;
      group.scheme = context.planned || !context.fixed ? model->name : context.fixed_name;
      group.planned = context.planned;
      group.loads.assign(static_cast<std::size_t>(ranks_), {});
      group.work.assign(static_cast<std::size_t>(ranks_), {});
      group.memory_bytes.assign(static_cast<std::size_t>(ranks_), 0.0);
      return group;
    };
    std::vector<std::pair<const SchemeModel*, PlannedLayer>> groups;
    std::vector<double> dynamic_keys(static_cast<std::size_t>(ranks_), 0.0);
    std::vector<const Choice*> dynamic_choices;
    for (const auto& choice : choices) {
      if (choice.context != c || !choice.scheme) continue;
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == choice.scheme; });
      if (it == groups.end()) {
        groups.emplace_back(choice.scheme, group_of(choice.scheme));
        it = groups.end() - 1;
      }
      auto& group = it->second;
      const auto& model = *choice.scheme;
      if (context.layer->storage.dynamic) dynamic_choices.push_back(&choice);
      const auto& table_loads = owner_loads(context, model, choice.slot);
      const auto& model_table = table(context.skew_aware, choice.slot);
      add_work(context, model, choice.slot, choice.owner, group.work);
      group.slots.push_back(choice.slot);
      if (model.ownership == Ownership::kHotReplicas) group.hot_rows.push_back(model_table.hot_rows);
      if (model.ownership == Ownership::kOneRank) group.table_ranks.push_back(choice.owner);
      if (model.ownership == Ownership::kNodeRowBlocks) {
        group.table_nodes.push_back(choice.owner);
        group.ranks_per_node = context.shape.ranks_per_node;
      }
      const int unit = placed_unit(context, model);  // a placed table's loads are its ranks', from 0
      if (unit > 0) {
        for (int l = 0; l < unit; ++l) {
          const auto at = static_cast<std::size_t>(choice.owner * unit + l);
          group.loads[at].pairs += table_loads[static_cast<std::size_t>(l)].pairs;
          group.loads[at].distinct += table_loads[static_cast<std::size_t>(l)].distinct;
        }
      } else {
        for (std::size_t r = 0; r < table_loads.size(); ++r) {
          group.loads[r].pairs += table_loads[r].pairs;
          group.loads[r].distinct += table_loads[r].distinct;
          group.loads[r].replica_pairs += table_loads[r].replica_pairs;
          group.loads[r].replica_distinct += table_loads[r].replica_distinct;
        }
      }
      // Memory: static rows now; a dynamic layer's keys are summed and charged per rank below.
      auto rows = owned_rows(model_table, model.ownership, ranks_);
      if (unit > 0) std::rotate(rows.rbegin(), rows.rbegin() + choice.owner * unit, rows.rend());
      static const std::vector<double> kNone;
      const auto& run =
          context.layer->storage.dynamic ? run_keys(context.skew_aware, choice.slot, model.ownership) : kNone;
      for (std::size_t r = 0; r < rows.size(); ++r) {
        layer_rows[r] += static_cast<double>(rows[r]);
        if (context.layer->storage.dynamic) {
          const int rank = static_cast<int>(r);
          const double keys = unit == 0                     ? run[r]
                              : rank / unit == choice.owner ? run[static_cast<std::size_t>(rank % unit)]
                                                            : 0.0;
          dynamic_keys[r] += keys;
          continue;
        }
        const double bytes = static_cast<double>(rows[r]) *
                             (model.ownership == Ownership::kEveryRank ? context.column_row_bytes : context.row_bytes);
        group.memory_bytes[r] += bytes;
        if (bytes > largest_bytes[r]) {
          largest_bytes[r] = bytes;
          largest_slot[r] = choice.slot;
        }
      }
    }
    // A dynamic layer keeps one KV table per rank for all its slots; a two-tier one a fast table
    // in front of a slow tier.
    if (context.layer->storage.dynamic && !groups.empty()) {
      if (context.layer->storage.two_tier()) {
        add_fast_tier(context, dynamic_choices, dynamic_keys, groups.front().second);
      } else {
        for (std::size_t r = 0; r < dynamic_keys.size(); ++r)
          groups.front().second.memory_bytes[r] +=
              kv_table_bytes(context.layer->storage, dynamic_keys[r], context.row_bytes);
      }
    }
    if (!context.layer->storage.dynamic) {
      for (std::size_t r = 0; r < layer_rows.size(); ++r)
        if (layer_rows[r] > static_cast<double>(context.layer->max_vocabulary_size_per_gpu) &&
            vocabulary_shortfall.empty())
          vocabulary_shortfall = "layers[" + context.layer->name + "]: rank " + std::to_string(r) + " would hold " +
                                 std::to_string(static_cast<std::int64_t>(layer_rows[r])) +
                                 " rows, above its sparse_embedding_hparam.max_vocabulary_size_per_gpu (" +
                                 std::to_string(context.layer->max_vocabulary_size_per_gpu) + ")";
    }
    // The planned layers in the order of planned_schemes().
    std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [model, group] : groups) {
      double slowest = 0.0;
      group.seconds.clear();
      for (std::size_t r = 0; r < group.work.size(); ++r) {
        group.seconds.push_back(rank_seconds(group.work[r], cost_));
        slowest = std::max(slowest, group.seconds.back());
        memory[r] += group.memory_bytes[r];
      }
      group.collectives = model->collectives;
      group.step_seconds = slowest + model->collectives * cost_.seconds_per_collective;
      if (!group.fast_tier.empty()) check_fast_tier(group, slow_memory, tier_shortfall);
      result.seconds += group.step_seconds;
      if (detail) result.layers.push_back(std::move(group));
    }
  }
  const auto worst = std::max_element(memory.begin(), memory.end());
  result.fits = *worst <= static_cast<double>(memory_limit_) && vocabulary_shortfall.empty() && tier_shortfall.empty();
  if (!vocabulary_shortfall.empty()) {
    result.shortfall = vocabulary_shortfall;
  } else if (!tier_shortfall.empty()) {
    result.shortfall = tier_shortfall;
  } else if (!result.fits) {
    const auto r = static_cast<std::size_t>(worst - memory.begin());
    result.shortfall = "rank " + std::to_string(r) + " needs " + gib(*worst) + ", " +
                       gib(*worst - static_cast<double>(memory_limit_)) + " more than the " +
                       gib(static_cast<double>(memory_limit_)) + " a rank may hold (planner.memory_per_rank)";
    if (largest_slot[r] >= 0)
      result.shortfall += "; its largest table is slot " + std::to_string(largest_slot[r]) + " (" +
                          std::to_string(config_.data.slot_size_array[static_cast<std::size_t>(largest_slot[r])]) +
                          " rows, " + gib(largest_bytes[r]) + " on that rank)";
  }
  return result;
}

}  // namespace embscale::plan
