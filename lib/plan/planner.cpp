#include "plan/planner.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <tuple>

#include "core/error.hpp"
#include "embedding/pooled_scheme.hpp"
#include "embedding/scheme_registry.hpp"
#include "embedding/sparse_optimizer.hpp"
#include "kv/value_types.hpp"
#include "plan/memory_model.hpp"
#include "plan/sampled_load.hpp"

namespace embscale::plan {
namespace {

// Measured on the development machine (lib/plan/README.md, "Calibration"): a fit of the phase
// times of every fixed scheme's run to the work this model predicts for it.
constexpr CostParameters kDefaultCost{4.0e-9, 5.0e-8, 1.5e-10, 4.0e-10, 2.0e-5};

// TorchRec's HeuristicalStorageReservation keeps 15 % of a device's memory back.
constexpr double kMemoryReserve = 0.15;

// Moves of one table are tried this many rounds over all tables at most (each round that moves
// nothing ends the search first).
constexpr int kImprovementRounds = 20;
// A move must lower the predicted step time by more than this fraction to count (float noise).
constexpr double kImprovementTolerance = 1e-9;

std::string gib(double bytes) {
  std::ostringstream out;
  out.precision(3);
  out << bytes / double(1 << 30) << " GiB";
  return out.str();
}

// A layer of the given config as the planner sees it.
struct LayerContext {
  std::size_t index = 0;                        // in config.embeddings
  const config::EmbeddingLayer* layer = nullptr;
  bool planned = false;
  bool skew_aware = true;
  std::vector<const SchemeModel*> candidates;   // planned layers: the schemes it may run
  const SchemeModel* fixed = nullptr;           // fixed layers: the model of its scheme (null: none)
  std::string fixed_name;                       // fixed layers: the registry's name
  std::vector<int> fixed_owner;                 // fixed whole-table layers: each slot's owner
  LayerShape shape;
  double row_bytes = 0.0;                       // a stored row with its optimizer state
  double column_row_bytes = 0.0;                // a column shard's stored row
};

// A table's place: the layer context, the slot's position in that layer, its scheme and owner.
struct Choice {
  std::size_t context = 0;
  std::size_t position = 0;
  std::int32_t slot = 0;
  const SchemeModel* scheme = nullptr;
  int owner = 0;
  bool operator==(const Choice&) const = default;
};

struct Evaluation {
  double seconds = std::numeric_limits<double>::infinity();
  bool fits = false;
  std::string shortfall;  // why it does not fit
  std::vector<PlannedLayer> layers;
};

class Planner {
 public:
  Planner(const config::Config& config, int ranks) : config_(config), ranks_(ranks) {
    const auto* settings = config.planner ? &*config.planner : nullptr;
    cost_ = cost_parameters(settings);
    memory_limit_ = settings && settings->memory_per_rank > 0 ? settings->memory_per_rank : default_memory_per_rank(ranks);
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

  ShardingPlan plan() {
    std::vector<Choice> fixed;
    std::vector<std::size_t> planned_tables;  // indices into choices of the planned tables
    std::vector<Choice> base;
    for (std::size_t c = 0; c < contexts_.size(); ++c) {
      const auto& context = contexts_[c];
      const auto& slots = context.layer->slots;
      for (std::size_t p = 0; p < slots.size(); ++p) {
        Choice choice{c, p, slots[p], context.planned ? context.candidates.front() : context.fixed,
                      context.fixed_owner.empty() ? 0 : context.fixed_owner[p]};
        if (context.planned) planned_tables.push_back(base.size());
        base.push_back(choice);
      }
    }
    std::optional<std::vector<Choice>> best;
    double best_seconds = std::numeric_limits<double>::infinity();
    std::string shortfall;
    for (auto start : starts(base, planned_tables)) {
      auto evaluation = evaluate(start, false);
      if (!evaluation.fits) {
        if (shortfall.empty()) shortfall = evaluation.shortfall;
        continue;
      }
      improve(start, planned_tables, evaluation.seconds);
      const double seconds = evaluate(start, false).seconds;
      if (seconds < best_seconds * (1.0 - kImprovementTolerance)) {
        best_seconds = seconds;
        best = start;
      }
    }
    if (!best) throw InputError("planner: no sharding plan fits " + std::to_string(ranks_) + " ranks: " + shortfall);
    return finish(*best);
  }

 private:
  LayerContext make_context(std::size_t i, const config::PlannerSettings* settings) {
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
    context.row_bytes = (dim + context.shape.state_width) * context.shape.value_bytes;
    context.column_row_bytes = (std::max(1, dim / ranks_) + context.shape.column_state_width) * context.shape.value_bytes;
    const std::string path = "layers[" + layer.name + "]";
    if (context.planned) {
      for (const auto& model : planned_schemes()) {
        if (settings && !settings->schemes.empty() &&
            std::find(settings->schemes.begin(), settings->schemes.end(), model.name) == settings->schemes.end())
          continue;
        if (model.static_only && layer.storage.dynamic) continue;
        if (model.scheme == PlannedScheme::kColumnWise && dim < ranks_) continue;
        context.candidates.push_back(&model);
      }
      if (settings) check_scheme_names(settings->schemes);
      if (context.candidates.empty())
        throw InputError(path + ": no scheme the planner may choose can run this layer (planner.schemes; column_wise "
                         "and data_parallel need static storage, column_wise a column per rank)");
      return context;
    }
    const auto& entry = embedding::scheme_of(layer);
    context.fixed_name = entry.name;
    const std::string name = context.fixed_name == "distributed_sparse" ? "distributed_slot" : context.fixed_name;
    if (name == "localized_slot") {
      context.fixed = planned_scheme("table_wise");
      for (std::size_t p = 0; p < layer.slots.size(); ++p) context.fixed_owner.push_back(static_cast<int>(p) % ranks_);
    } else {
      context.fixed = planned_scheme(name);
      if (name == "table_wise") {
        if (!layer.table_ranks.empty()) {
          context.fixed_owner.assign(layer.table_ranks.begin(), layer.table_ranks.end());
        } else {
          embedding::LayerSpec spec;
          for (const auto slot : layer.slots) spec.slot_sizes.push_back(config_.data.slot_size_array[static_cast<std::size_t>(slot)]);
          context.fixed_owner = embedding::place_tables(spec, ranks_);
        }
      }
    }
    return context;  // predicted skew-aware: analytic where the slots have a model, else measured
  }

  static void check_scheme_names(const std::vector<std::string>& names) {
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (planned_scheme(names[i])) continue;
      std::string known;
      for (const auto& model : planned_schemes()) known += (known.empty() ? "\"" : ", \"") + std::string(model.name) + "\"";
      throw InputError("planner.schemes[" + std::to_string(i) + "]: expected one of " + known +
                       " (the schemes the planner models), got \"" + names[i] + "\"");
    }
  }

  bool measured(bool aware, std::int32_t slot) const { return aware && measured_[static_cast<std::size_t>(slot)]; }

  const LoadSample& sample() {
    if (!sample_) {
      const bool dynamic = std::any_of(contexts_.begin(), contexts_.end(),
                                       [](const LayerContext& c) { return c.layer->storage.dynamic; });
      sample_.emplace(config_, ranks_, measured_slots_, dynamic);
    }
    return *sample_;
  }

  const TableModel& table(bool aware, std::int32_t slot) {
    auto key = std::make_pair(aware, slot);
    auto it = tables_.find(key);
    if (it == tables_.end()) {
      // A measured slot: the sizes of the skew-blind model, the bag size measured.
      auto model = table_model(config_, slot, aware && !measured(aware, slot));
      if (measured(aware, slot)) model.bag_size = sample().bag_size(slot);
      it = tables_.emplace(key, std::move(model)).first;
    }
    return it->second;
  }

  const std::vector<RankLoad>& loads(bool aware, std::int32_t slot, Ownership ownership) {
    auto key = std::make_tuple(aware, slot, static_cast<int>(ownership));
    auto it = loads_.find(key);
    if (it == loads_.end()) {
      auto computed = measured(aware, slot) ? sample().loads(slot, ownership)
                                            : expected_loads(table(aware, slot), ownership, ranks_, config_.solver.batchsize);
      it = loads_.emplace(key, std::move(computed)).first;
    }
    return it->second;
  }

  // add_table_work with the table's loads under the scheme's ownership.
  void add_work(const LayerContext& context, const SchemeModel& model, std::int32_t slot, int owner,
                std::vector<RankWork>& work) {
    add_table_work(model, context.shape, table(context.skew_aware, slot), loads(context.skew_aware, slot, model.ownership),
                   loads(context.skew_aware, slot, Ownership::kOneRank)[0].distinct, owner, work);
  }

  // A dynamic table's distinct keys per rank over the run (warm-up and timed steps).
  const std::vector<double>& run_keys(bool aware, std::int32_t slot, Ownership ownership) {
    auto key = std::make_tuple(aware, slot, static_cast<int>(ownership));
    auto it = run_keys_.find(key);
    if (it == run_keys_.end()) {
      const auto steps = std::max<std::int64_t>(1, config_.solver.warmup_iter + config_.solver.max_iter);
      std::vector<double> keys;
      if (measured(aware, slot)) {
        // Measured over the sample's batches; a longer run is extrapolated linearly, up to the
        // keys the rank owns (an upper bound: the memory plan errs on the safe side).
        keys = sample().distinct_over_sample(slot, ownership);
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

  // The planned layers of `choices` with their predictions, and whether they fit.
  Evaluation evaluate(const std::vector<Choice>& choices, bool detail) {
    Evaluation result;
    result.seconds = 0.0;
    std::vector<double> memory(static_cast<std::size_t>(ranks_), 0.0);
    std::vector<std::int32_t> largest_slot(static_cast<std::size_t>(ranks_), -1);
    std::vector<double> largest_bytes(static_cast<std::size_t>(ranks_), 0.0);
    std::string vocabulary_shortfall;
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
      for (const auto& choice : choices) {
        if (choice.context != c || !choice.scheme) continue;
        auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == choice.scheme; });
        if (it == groups.end()) {
          groups.emplace_back(choice.scheme, group_of(choice.scheme));
          it = groups.end() - 1;
        }
        auto& group = it->second;
        const auto& model = *choice.scheme;
        const auto& table_loads = loads(context.skew_aware, choice.slot, model.ownership);
        const auto& model_table = table(context.skew_aware, choice.slot);
        add_work(context, model, choice.slot, choice.owner, group.work);
        group.slots.push_back(choice.slot);
        if (model.ownership == Ownership::kOneRank) {
          group.table_ranks.push_back(choice.owner);
          group.loads[static_cast<std::size_t>(choice.owner)].pairs += table_loads[0].pairs;
          group.loads[static_cast<std::size_t>(choice.owner)].distinct += table_loads[0].distinct;
        } else {
          for (std::size_t r = 0; r < table_loads.size(); ++r) {
            group.loads[r].pairs += table_loads[r].pairs;
            group.loads[r].distinct += table_loads[r].distinct;
          }
        }
        // Memory: static rows now; a dynamic layer's keys are summed and charged per rank below.
        auto rows = owned_rows(model_table, model.ownership, ranks_);
        if (model.ownership == Ownership::kOneRank) std::rotate(rows.rbegin(), rows.rbegin() + choice.owner, rows.rend());
        const auto& run = context.layer->storage.dynamic ? run_keys(context.skew_aware, choice.slot, model.ownership)
                                                         : std::vector<double>{};
        for (std::size_t r = 0; r < rows.size(); ++r) {
          layer_rows[r] += static_cast<double>(rows[r]);
          if (context.layer->storage.dynamic) {
            const double keys = model.ownership == Ownership::kOneRank ? (static_cast<int>(r) == choice.owner ? run[0] : 0.0) : run[r];
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
      // A dynamic layer keeps one KV table per rank for all its slots.
      if (context.layer->storage.dynamic && !groups.empty()) {
        for (std::size_t r = 0; r < dynamic_keys.size(); ++r)
          groups.front().second.memory_bytes[r] += kv_table_bytes(context.layer->storage, dynamic_keys[r], context.row_bytes);
      }
      if (!context.layer->storage.dynamic) {
        for (std::size_t r = 0; r < layer_rows.size(); ++r)
          if (layer_rows[r] > static_cast<double>(context.layer->max_vocabulary_size_per_gpu) && vocabulary_shortfall.empty())
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
        result.seconds += group.step_seconds;
        if (detail) result.layers.push_back(std::move(group));
      }
    }
    const auto worst = std::max_element(memory.begin(), memory.end());
    result.fits = *worst <= static_cast<double>(memory_limit_) && vocabulary_shortfall.empty();
    if (!vocabulary_shortfall.empty()) {
      result.shortfall = vocabulary_shortfall;
    } else if (!result.fits) {
      const auto r = static_cast<std::size_t>(worst - memory.begin());
      result.shortfall = "rank " + std::to_string(r) + " needs " + gib(*worst) + ", " +
                         gib(*worst - static_cast<double>(memory_limit_)) + " more than the " + gib(static_cast<double>(memory_limit_)) +
                         " a rank may hold (planner.memory_per_rank)";
      if (largest_slot[r] >= 0)
        result.shortfall += "; its largest table is slot " + std::to_string(largest_slot[r]) + " (" +
                            std::to_string(config_.data.slot_size_array[static_cast<std::size_t>(largest_slot[r])]) +
                            " rows, " + gib(largest_bytes[r]) + " on that rank)";
    }
    return result;
  }

  // The owner of a whole table: the rank whose predicted time (over the tables placed so far)
  // is least, among those with room for it.
  void place_whole_tables(std::vector<Choice>& choices, const std::vector<std::size_t>& planned) {
    std::vector<std::size_t> order;
    for (const auto i : planned)
      if (choices[i].scheme->ownership == Ownership::kOneRank) order.push_back(i);
    const auto weight = [&](std::size_t i) {
      const auto& context = contexts_[choices[i].context];
      std::vector<RankWork> work(static_cast<std::size_t>(ranks_));
      add_work(context, *choices[i].scheme, choices[i].slot, 0, work);
      return rank_seconds(work[0], cost_);
    };
    std::vector<double> weights(choices.size(), 0.0);
    for (const auto i : order) weights[i] = weight(i);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return weights[a] > weights[b]; });
    // Tables of other schemes stay where they are; whole tables are placed one at a time.
    for (const auto i : order) choices[i].scheme = nullptr;
    for (const auto i : order) {
      choices[i].scheme = planned_scheme("table_wise");
      double best = std::numeric_limits<double>::infinity();
      int best_owner = 0;
      for (int r = 0; r < ranks_; ++r) {
        choices[i].owner = r;
        const auto evaluation = evaluate(choices, false);
        const double seconds = evaluation.fits ? evaluation.seconds : std::numeric_limits<double>::max() / 2 + evaluation.seconds;
        if (seconds < best) {
          best = seconds;
          best_owner = r;
        }
      }
      choices[i].owner = best_owner;
    }
  }

  // The starting plans: each scheme for every table (where a layer may run it), and each table
  // on the scheme that holds least of it per rank.
  std::vector<std::vector<Choice>> starts(const std::vector<Choice>& base, const std::vector<std::size_t>& planned) {
    std::vector<std::vector<Choice>> result;
    for (const auto& model : planned_schemes()) {
      auto start = base;
      bool any = false;
      for (const auto i : planned) {
        const auto& candidates = contexts_[start[i].context].candidates;
        if (std::find(candidates.begin(), candidates.end(), &model) == candidates.end()) continue;
        start[i].scheme = &model;
        any = true;
      }
      if (!any) continue;
      place_whole_tables(start, planned);
      result.push_back(std::move(start));
    }
    auto least = base;
    for (const auto i : planned) {
      const auto& context = contexts_[least[i].context];
      double smallest = std::numeric_limits<double>::infinity();
      for (const auto* model : context.candidates) {
        if (model->ownership == Ownership::kOneRank && ranks_ > 1) continue;
        const auto rows = owned_rows(table(context.skew_aware, least[i].slot), model->ownership, ranks_);
        const double width = model->ownership == Ownership::kEveryRank ? context.column_row_bytes : context.row_bytes;
        const double bytes = static_cast<double>(*std::max_element(rows.begin(), rows.end())) * width;
        if (bytes < smallest) {
          smallest = bytes;
          least[i].scheme = model;
        }
      }
    }
    place_whole_tables(least, planned);
    result.push_back(std::move(least));
    return result;
  }

  // Moves one table at a time to the scheme and owner that lower the prediction most, until no
  // move does (or kImprovementRounds rounds).
  void improve(std::vector<Choice>& choices, const std::vector<std::size_t>& planned, double seconds) {
    for (int round = 0; round < kImprovementRounds; ++round) {
      bool moved = false;
      for (const auto i : planned) {
        const auto& context = contexts_[choices[i].context];
        Choice best = choices[i];
        for (const auto* model : context.candidates) {
          const int owners = model->ownership == Ownership::kOneRank ? ranks_ : 1;
          for (int owner = 0; owner < owners; ++owner) {
            const Choice current = choices[i];
            choices[i].scheme = model;
            choices[i].owner = owner;
            const auto evaluation = evaluate(choices, false);
            if (evaluation.fits && evaluation.seconds < seconds * (1.0 - kImprovementTolerance)) {
              seconds = evaluation.seconds;
              best = choices[i];
            }
            choices[i] = current;
          }
        }
        if (!(best == choices[i])) {
          choices[i] = best;
          moved = true;
        }
      }
      if (!moved) return;
    }
  }

  ShardingPlan finish(const std::vector<Choice>& choices) {
    auto evaluation = evaluate(choices, true);
    ShardingPlan plan;
    plan.ranks = ranks_;
    plan.cost = cost_;
    plan.memory_per_rank = memory_limit_;
    plan.step_seconds = evaluation.seconds;
    plan.measured_slots = measured_slots_;
    plan.measured_reasons = measured_reasons_;
    plan.measured_batches = sample_ ? sample_->batches() : 0;
    bool aware = false, blind = false;
    for (const auto& context : contexts_) {
      if (!context.planned) continue;
      (context.skew_aware ? aware : blind) = true;
    }
    plan.policy = aware && blind ? "skew_aware+skew_blind" : (blind ? "skew_blind" : "skew_aware");
    plan.layers = std::move(evaluation.layers);
    // Every fixed layer whose scheme the planner does not model still belongs to the config.
    plan.config = config_.source;
    auto& json_layers = plan.config["layers"];
    nlohmann::json rewritten = nlohmann::json::array();
    std::vector<std::string> names;
    for (const auto& layer : json_layers)
      if (layer.contains("name") && layer["name"].is_string()) names.push_back(layer["name"].get<std::string>());
    for (const auto& layer : json_layers) {
      const auto name = layer.value("name", std::string());
      const auto context = std::find_if(contexts_.begin(), contexts_.end(),
                                        [&](const LayerContext& c) { return c.layer->name == name; });
      if (context == contexts_.end() || !context->planned) {
        rewritten.push_back(layer);
        continue;
      }
      std::vector<PlannedLayer*> parts;
      for (auto& planned : plan.layers)
        if (planned.planned && planned.source_layer == name) parts.push_back(&planned);
      for (auto* part : parts) {
        std::string part_name = parts.size() == 1 ? name : name + "_" + part->scheme;
        while (parts.size() > 1 && std::count(names.begin(), names.end(), part_name) > 0) part_name += "_";
        part->name = part_name;
        nlohmann::json out = layer;
        out["name"] = part_name;
        out["top"] = parts.size() == 1 ? layer.value("top", part_name) : part_name;
        out["type"] = "ShardedEmbedding";
        out["sharding"] = part->scheme;
        out["slots"] = part->slots;
        out.erase("table_ranks");
        if (!part->table_ranks.empty()) out["table_ranks"] = part->table_ranks;
        rewritten.push_back(std::move(out));
      }
    }
    for (auto& planned : plan.layers)
      if (!planned.planned) planned.name = planned.source_layer;
    json_layers = std::move(rewritten);
    if (plan.config.contains("planner")) plan.config["planner"].erase("all_layers");
    return plan;
  }

  const config::Config& config_;
  int ranks_;
  CostParameters cost_;
  std::int64_t memory_limit_ = 0;
  std::vector<LayerContext> contexts_;
  std::vector<bool> measured_;                // per slot
  std::vector<std::int32_t> measured_slots_;
  std::vector<std::string> measured_reasons_;
  std::optional<LoadSample> sample_;
  std::map<std::pair<bool, std::int32_t>, TableModel> tables_;
  std::map<std::tuple<bool, std::int32_t, int>, std::vector<RankLoad>> loads_;
  std::map<std::tuple<bool, std::int32_t, int>, std::vector<double>> run_keys_;
};

}  // namespace

CostParameters cost_parameters(const config::PlannerSettings* settings) {
  CostParameters cost = kDefaultCost;
  if (!settings) return cost;
  cost.seconds_per_key = settings->seconds_per_key.value_or(cost.seconds_per_key);
  cost.seconds_per_row = settings->seconds_per_row.value_or(cost.seconds_per_row);
  cost.seconds_per_byte = settings->seconds_per_byte.value_or(cost.seconds_per_byte);
  cost.seconds_per_comm_byte = settings->seconds_per_comm_byte.value_or(cost.seconds_per_comm_byte);
  cost.seconds_per_collective = settings->seconds_per_collective.value_or(cost.seconds_per_collective);
  return cost;
}

std::int64_t default_memory_per_rank(int ranks) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  while (meminfo >> key) {
    if (key == "MemTotal:") {
      meminfo >> kib;
      break;
    }
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  if (kib <= 0) kib = std::int64_t{16} << 20;  // no /proc: assume 16 GiB
  return static_cast<std::int64_t>(static_cast<double>(kib) * 1024.0 * (1.0 - kMemoryReserve) / ranks);
}

bool has_auto_layers(const config::Config& config) {
  if (config.planner && config.planner->all_layers) return true;
  return std::any_of(config.embeddings.begin(), config.embeddings.end(),
                     [](const config::EmbeddingLayer& layer) { return config::is_auto_sharding(layer.sharding); });
}

ShardingPlan plan_sharding(const config::Config& config, int ranks) {
  EMBSCALE_EXPECTS(ranks >= 1 && config.solver.batchsize >= 1, "a plan needs ranks >= 1 and a resolved batch");
  return Planner(config, ranks).plan();
}

config::Config planned_config(const config::Config& config, const ShardingPlan& plan) {
  auto planned = config::parse_config(plan.config, "the sharding plan of " + std::to_string(plan.ranks) + " ranks");
  planned.directory = config.directory;
  planned.solver.batchsize = config.solver.batchsize;  // resolved for the ranks already
  return planned;
}

std::optional<ShardingPlan> plan_for_run(config::Config& config, int ranks) {
  const bool planned = has_auto_layers(config);
  if (!planned && !config.planner) return std::nullopt;
  auto plan = plan_sharding(config, ranks);
  if (planned) config = planned_config(config, plan);
  return plan;
}

}  // namespace embscale::plan
