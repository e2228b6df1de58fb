#include "plan/plan_state.hpp"

#include <algorithm>
#include <limits>

#include "core/error.hpp"
#include "plan/memory_model.hpp"
#include "plan/tier_model.hpp"

namespace embscale::plan {
namespace {

constexpr double kNone = -std::numeric_limits<double>::infinity();

// The largest two values of `v` and where the largest is: the largest over all ranks but one is
// then one lookup.
struct TopTwo {
  double first = kNone, second = kNone;
  std::size_t at = 0;
  void add(double value, std::size_t rank) {
    if (value > first) {
      second = first;
      first = value;
      at = rank;
    } else if (value > second) {
      second = value;
    }
  }
  double without(std::size_t rank) const noexcept { return rank == at ? second : first; }
};

}  // namespace

PlanState::PlanState(PlanModel& model, std::vector<Choice> choices)
    : model_(model), ranks_(model.ranks()), memory_(static_cast<std::size_t>(model.ranks()), 0.0) {
  const auto p = static_cast<std::size_t>(ranks_);
  contexts_.resize(model_.contexts().size());
  for (std::size_t c = 0; c < contexts_.size(); ++c) {
    auto& cm = contexts_[c];
    cm.bytes.assign(p, 0.0);
    cm.rows.assign(p, 0.0);
    cm.keys.assign(p, 0.0);
    cm.total.assign(p, 0.0);
  }
  choices_ = std::move(choices);
  for (const auto& choice : choices_) apply(choice, 1.0);
}

bool PlanState::fits() const noexcept {
  const double worst = *std::max_element(memory_.begin(), memory_.end());
  return worst <= static_cast<double>(model_.memory_limit()) && over_vocabulary_ == 0;
}

const PlanState::Share& PlanState::share(const Choice& choice) {
  const auto key = std::make_tuple(choice.context, choice.slot, choice.scheme);
  auto it = shares_.find(key);
  if (it != shares_.end()) return it->second;
  const auto& context = model_.contexts()[choice.context];
  const auto& scheme = *choice.scheme;
  const auto p = static_cast<std::size_t>(ranks_);
  Share s;
  s.unit = placed_unit(context, scheme);
  std::vector<RankWork> work(p);
  model_.add_work(context, scheme, choice.slot, 0, work);
  for (const auto& w : work) s.seconds.push_back(rank_seconds(w, model_.cost()));
  const auto owned = owned_rows(model_.table(context.skew_aware, choice.slot), scheme.ownership, ranks_);
  const bool dynamic = context.layer->storage.dynamic;
  const double width = scheme.ownership == Ownership::kEveryRank ? context.column_row_bytes : context.row_bytes;
  s.bytes.assign(p, 0.0);
  s.rows.assign(p, 0.0);
  s.keys.assign(p, 0.0);
  for (std::size_t r = 0; r < p; ++r) {
    s.rows[r] = static_cast<double>(owned[r]);
    if (!dynamic) s.bytes[r] = s.rows[r] * width;
  }
  if (dynamic) {
    const auto& run = model_.run_keys(context.skew_aware, choice.slot, scheme.ownership);
    if (s.unit > 0) std::copy_n(run.begin(), s.unit, s.keys.begin());  // the owner's; other ranks hold none
    else s.keys = run;
  }
  if (s.unit > 0) {  // at(): [the owner's ranks, any other rank]; with one owner there is no other
    // Rank `unit` is on owner 1: any other rank's values (every other rank has the same).
    for (auto* v : {&s.seconds, &s.bytes, &s.rows, &s.keys}) v->resize(static_cast<std::size_t>(s.unit) + 1, 0.0);
  }
  return shares_.emplace(key, std::move(s)).first->second;
}

PlanState::Group& PlanState::group(const Choice& choice) {
  auto [it, added] = groups_.try_emplace(std::make_pair(choice.context, choice.scheme));
  if (added) {
    it->second.seconds.assign(static_cast<std::size_t>(ranks_), 0.0);
    it->second.collectives = choice.scheme->collectives;
  }
  return it->second;
}

double PlanState::group_step(const Group& g) const {
  return g.tables > 0 ? g.slowest + g.collectives * model_.cost().seconds_per_collective : 0.0;
}

double PlanState::context_total(std::size_t context, double bytes, double keys, int tables) const {
  const auto& layer = *model_.contexts()[context].layer;
  if (!layer.storage.dynamic || tables == 0) return bytes;
  const double row_bytes = model_.contexts()[context].row_bytes;
  // A two-tier layer's rank holds its fast tier; the rest of its keys are in host memory.
  if (layer.storage.two_tier()) return bytes + fast_tier_bytes(layer.storage, keys, row_bytes);
  return bytes + kv_table_bytes(layer.storage, keys, row_bytes);
}

bool PlanState::over_vocabulary(std::size_t context, double rows) const {
  const auto& layer = *model_.contexts()[context].layer;
  return !layer.storage.dynamic && rows > static_cast<double>(layer.max_vocabulary_size_per_gpu);
}

void PlanState::apply(const Choice& choice, double sign) {
  if (!choice.scheme) return;
  const Share& s = share(choice);
  Group& g = group(choice);
  seconds_ -= group_step(g);
  g.tables += sign > 0 ? 1 : -1;
  g.slowest = 0.0;
  for (int r = 0; r < ranks_; ++r) {
    auto& t = g.seconds[static_cast<std::size_t>(r)];
    t = g.tables == 0 ? 0.0 : t + sign * s.at(s.seconds, r, choice.owner);  // an empty group is exactly empty
    g.slowest = std::max(g.slowest, t);
  }
  seconds_ += group_step(g);

  auto& cm = contexts_[choice.context];
  cm.tables += sign > 0 ? 1 : -1;
  for (int r = 0; r < ranks_; ++r) {
    const auto at = static_cast<std::size_t>(r);
    const bool was_over = over_vocabulary(choice.context, cm.rows[at]);
    if (cm.tables == 0) {
      cm.bytes[at] = cm.rows[at] = cm.keys[at] = 0.0;
    } else {
      cm.bytes[at] += sign * s.at(s.bytes, r, choice.owner);
      cm.rows[at] += sign * s.at(s.rows, r, choice.owner);
      cm.keys[at] += sign * s.at(s.keys, r, choice.owner);
    }
    const bool is_over = over_vocabulary(choice.context, cm.rows[at]);
    cm.over_vocabulary += static_cast<int>(is_over) - static_cast<int>(was_over);
    over_vocabulary_ += static_cast<int>(is_over) - static_cast<int>(was_over);
    const double total = context_total(choice.context, cm.bytes[at], cm.keys[at], cm.tables);
    memory_[at] += total - cm.total[at];
    cm.total[at] = total;
  }
}

PlanState::Held PlanState::held_without(const ContextMemory& cm, int rank, const Share* leaving, int owner) {
  const auto at = static_cast<std::size_t>(rank);
  Held held{cm.bytes[at], cm.rows[at], cm.keys[at]};
  if (leaving) {
    held.bytes -= leaving->at(leaving->bytes, rank, owner);
    held.rows -= leaving->at(leaving->rows, rank, owner);
    held.keys -= leaving->at(leaving->keys, rank, owner);
  }
  return held;
}

void PlanState::move(std::size_t i, const Choice& to) {
  EMBSCALE_EXPECTS(to.context == choices_[i].context && to.slot == choices_[i].slot, "a move keeps the table");
  apply(choices_[i], -1.0);
  choices_[i] = to;
  apply(to, 1.0);
}

PlanState::Outcome PlanState::try_move(std::size_t i, const Choice& to) {
  const Choice from = choices_[i];
  EMBSCALE_EXPECTS(to.context == from.context && to.slot == from.slot, "a move keeps the table");
  const Share* leaving = from.scheme ? &share(from) : nullptr;
  const Share* coming = to.scheme ? &share(to) : nullptr;
  Group* old_group = from.scheme ? &group(from) : nullptr;
  Group* new_group = to.scheme ? &group(to) : nullptr;
  Outcome outcome;
  outcome.seconds = seconds_;
  // A group's step with the table's share taken out (old) and put in (new).
  const auto step_after = [&](const Group& g) {
    const bool out = &g == old_group, in = &g == new_group;
    const int tables = g.tables - static_cast<int>(out) + static_cast<int>(in);
    if (tables == 0) return 0.0;
    double slowest = 0.0;
    for (int r = 0; r < ranks_; ++r) {
      double t = g.seconds[static_cast<std::size_t>(r)];
      if (out) t -= leaving->at(leaving->seconds, r, from.owner);
      if (in) t += coming->at(coming->seconds, r, to.owner);
      slowest = std::max(slowest, t);
    }
    return slowest + g.collectives * model_.cost().seconds_per_collective;
  };
  if (old_group) outcome.seconds += step_after(*old_group) - group_step(*old_group);
  if (new_group && new_group != old_group) outcome.seconds += step_after(*new_group) - group_step(*new_group);

  const auto& cm = contexts_[to.context];
  const int tables = cm.tables - static_cast<int>(leaving != nullptr) + static_cast<int>(coming != nullptr);
  double worst = 0.0;
  int over = over_vocabulary_ - cm.over_vocabulary;
  for (int r = 0; r < ranks_; ++r) {
    const auto at = static_cast<std::size_t>(r);
    auto [bytes, rows, keys] = held_without(cm, r, leaving, from.owner);
    if (coming) {
      bytes += coming->at(coming->bytes, r, to.owner);
      rows += coming->at(coming->rows, r, to.owner);
      keys += coming->at(coming->keys, r, to.owner);
    }
    if (tables == 0) bytes = rows = keys = 0.0;
    over += static_cast<int>(over_vocabulary(to.context, rows));
    worst = std::max(worst, memory_[at] - cm.total[at] + context_total(to.context, bytes, keys, tables));
  }
  outcome.fits = worst <= static_cast<double>(model_.memory_limit()) && over == 0;
  return outcome;
}

int PlanState::best_owner(std::size_t i, const SchemeModel& model) {
  const Choice from = choices_[i];
  const auto& context = model_.contexts()[from.context];
  const int unit = placed_unit(context, model);
  EMBSCALE_EXPECTS(unit > 0 && ranks_ % unit == 0, "best_owner places whole tables and tables on a node");
  const int owners = ranks_ / unit;
  Choice to = from;
  to.scheme = &model;
  to.owner = 0;
  const Share* leaving = from.scheme ? &share(from) : nullptr;
  const Share& coming = share(to);
  Group& g = group(to);
  const bool out_of_g = from.scheme == &model;  // the table leaves the group it joins again
  // The group's times without the table; the table adds coming.seconds[l] to local rank l of its
  // owner and `other_time` to every other rank. Per owner: its slowest rank with the table, and
  // without it (the others' slowest is then one lookup among the owners').
  const double other_time = coming.seconds[static_cast<std::size_t>(unit)];
  std::vector<double> as_owner(static_cast<std::size_t>(owners), kNone);
  TopTwo slowest_other;
  {
    std::vector<double> plain(static_cast<std::size_t>(owners), kNone);
    const int group_tables = g.tables - static_cast<int>(out_of_g);
    for (int r = 0; r < ranks_; ++r) {
      double t = group_tables == 0 ? 0.0 : g.seconds[static_cast<std::size_t>(r)];
      if (out_of_g && group_tables > 0) t -= leaving->at(leaving->seconds, r, from.owner);
      const auto o = static_cast<std::size_t>(r / unit);
      plain[o] = std::max(plain[o], t);
      as_owner[o] = std::max(as_owner[o], t + coming.seconds[static_cast<std::size_t>(r % unit)]);
    }
    for (std::size_t o = 0; o < plain.size(); ++o) slowest_other.add(plain[o], o);
  }
  // Memory without the table, then with it on another owner's rank (`as_other`) or as its owner.
  const auto& cm = contexts_[from.context];
  const int tables = cm.tables - static_cast<int>(leaving != nullptr) + 1;
  const auto other_at = static_cast<std::size_t>(unit);
  std::vector<double> memory_owner(static_cast<std::size_t>(owners), kNone), memory_plain(memory_owner);
  std::vector<int> over_owner(static_cast<std::size_t>(owners), 0), over_other(over_owner);
  int others_over = 0;
  for (int r = 0; r < ranks_; ++r) {
    const auto at = static_cast<std::size_t>(r), local = static_cast<std::size_t>(r % unit),
               o = static_cast<std::size_t>(r / unit);
    auto [bytes, rows, keys] = held_without(cm, r, leaving, from.owner);
    const double rest = memory_[at] - cm.total[at];
    memory_plain[o] = std::max(memory_plain[o], rest + context_total(from.context, bytes + coming.bytes[other_at],
                                                                     keys + coming.keys[other_at], tables));
    memory_owner[o] = std::max(memory_owner[o], rest + context_total(from.context, bytes + coming.bytes[local],
                                                                     keys + coming.keys[local], tables));
    const int other = over_vocabulary(from.context, rows + coming.rows[other_at]);
    over_other[o] += other;
    over_owner[o] += over_vocabulary(from.context, rows + coming.rows[local]);
    others_over += other;
  }
  TopTwo memory_as_other;
  for (std::size_t o = 0; o < memory_plain.size(); ++o) memory_as_other.add(memory_plain[o], o);
  const int elsewhere_over = over_vocabulary_ - cm.over_vocabulary;
  const double limit = static_cast<double>(model_.memory_limit());
  int best = 0, best_any = 0;
  double best_step = std::numeric_limits<double>::infinity(), best_any_step = best_step;
  bool found = false;
  for (int y = 0; y < owners; ++y) {
    const auto at = static_cast<std::size_t>(y);
    const double step = std::max(slowest_other.without(at) + other_time, as_owner[at]);
    const bool fits = std::max(memory_as_other.without(at), memory_owner[at]) <= limit &&
                      elsewhere_over + others_over - over_other[at] + over_owner[at] == 0;
    if (step < best_any_step) {
      best_any_step = step;
      best_any = y;
    }
    if (fits && step < best_step) {
      best_step = step;
      best = y;
      found = true;
    }
  }
  return found ? best : best_any;
}

}  // namespace embscale::plan
