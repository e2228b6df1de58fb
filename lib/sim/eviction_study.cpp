#include "sim/eviction_study.hpp"

#include <algorithm>

#include "sim/table_study.hpp"

namespace embscale::sim {
namespace {

// The figures of one step summed over ranks, in the order of kStepColumns.
constexpr std::size_t kStepColumns = 6 + kOracleCount;  // accesses, hits, inserts, evictions,
                                                        // refused, not_admitted, oracle hits

std::vector<std::int64_t> flatten(const std::vector<StepFigures>& steps) {
  std::vector<std::int64_t> flat;
  flat.reserve(steps.size() * kStepColumns);
  for (const auto& s : steps) {
    flat.insert(flat.end(),
                {s.accesses, s.table.hits, s.table.inserts, s.table.evictions, s.table.refused, s.table.not_admitted});
    flat.insert(flat.end(), s.oracle_hits.begin(), s.oracle_hits.end());
  }
  return flat;
}

double ratio(double num, double den) { return den > 0 ? num / den : 0.0; }

// Each column of flattened step figures summed over the timed iterations (iteration >= 0).
std::array<double, kStepColumns> timed_totals(const std::vector<std::int64_t>& flat, std::int64_t first_iteration) {
  std::array<double, kStepColumns> total{};
  const std::size_t steps = flat.size() / kStepColumns;
  for (std::size_t s = static_cast<std::size_t>(std::max<std::int64_t>(0, -first_iteration)); s < steps; ++s)
    for (std::size_t c = 0; c < kStepColumns; ++c) total[c] += static_cast<double>(flat[s * kStepColumns + c]);
  return total;
}

// Builds one table's results from its figures summed over ranks.
class TableResults {
 public:
  TableResults(const TableStudy& study, std::string prefix, std::int64_t first_iteration, bool belady)
      : study_(study), prefix_(std::move(prefix)), first_(first_iteration) {
    for (std::size_t o = 0; o < kOracleCount; ++o)
      if (study.has(static_cast<Oracle>(o)) && (o != static_cast<std::size_t>(Oracle::kBelady) || belady))
        oracles_.push_back(o);
  }

  void add_step_tables(const std::vector<std::int64_t>& sums, EvictionResults& out) const {
    const std::size_t steps = sums.size() / kStepColumns;
    ResultTable hit_rate{prefix_ + "hit_rate",
                         "per iteration (warm-up negative), all ranks: keys held / keys asked for, "
                         "by the table and by each oracle of the same capacity",
                         {"iteration", "table"},
                         {}};
    for (const std::size_t o : oracles_) hit_rate.columns.push_back(config::kEvictionOracles[o]);
    ResultTable churn{prefix_ + "churn",
                      "per iteration, all ranks: what the table's read calls did",
                      {"iteration", "accesses", "hits", "inserts", "evictions", "refused", "not_admitted"},
                      {}};
    for (std::size_t s = 0; s < steps; ++s) {
      const std::int64_t* row = sums.data() + s * kStepColumns;
      const double iteration = static_cast<double>(first_ + static_cast<std::int64_t>(s));
      const auto accesses = static_cast<double>(row[0]);
      hit_rate.values.push_back(iteration);
      hit_rate.values.push_back(ratio(static_cast<double>(row[1]), accesses));
      for (const std::size_t o : oracles_) hit_rate.values.push_back(ratio(static_cast<double>(row[6 + o]), accesses));
      churn.values.push_back(iteration);
      for (std::size_t c = 0; c < 6; ++c) churn.values.push_back(static_cast<double>(row[c]));
    }
    out.tables.push_back(std::move(hit_rate));
    out.tables.push_back(std::move(churn));
  }

  // Timed iterations only (iteration >= 0): the summary's hit rates and gaps.
  void add_summary(const std::vector<std::int64_t>& sums, EvictionResults& out) const {
    const auto total = timed_totals(sums, first_);
    const double table = ratio(total[1], total[0]);
    out.summary.emplace_back(prefix_ + "hit_rate", table);
    for (const std::size_t o : oracles_)
      out.summary.emplace_back(prefix_ + "hit_rate_" + config::kEvictionOracles[o], ratio(total[6 + o], total[0]));
    for (const std::size_t o : oracles_)
      out.summary.emplace_back(prefix_ + "gap_to_" + config::kEvictionOracles[o],
                               ratio(total[6 + o], total[0]) - table);
  }

  void add_recall(comm::Communicator& comm, EvictionResults& out) const {
    const bool retention = study_.has(Oracle::kScoreRetention), hot = study_.has(Oracle::kLfu);
    if (!retention && !hot) return;
    std::vector<std::int64_t> local;
    for (const auto& s : study_.samples()) local.insert(local.end(), {s.retained, s.ideal, s.hot_held, s.hot});
    std::vector<std::int64_t> sums(local.size());
    comm.allreduce(std::span<const std::int64_t>(local), std::span<std::int64_t>(sums), comm::ReduceOp::kSum);
    ResultTable recall{prefix_ + "recall",
                       "at sampled iterations, all ranks: retention recall = |held by the table and "
                       "by score_retention| / |held by score_retention|; hot-key recall = share of the hottest keys "
                       "so far (hot_key_share of the keys seen, exact counts) the table holds",
                       {"iteration"},
                       {}};
    if (retention) recall.columns.push_back("retention_recall");
    if (hot) recall.columns.push_back("hot_key_recall");
    double last_retention = 0, last_hot = 0;
    for (std::size_t i = 0; i < study_.samples().size(); ++i) {
      const std::int64_t* row = sums.data() + i * 4;
      recall.values.push_back(static_cast<double>(first_ + study_.samples()[i].step));
      last_retention = ratio(static_cast<double>(row[0]), static_cast<double>(row[1]));
      last_hot = ratio(static_cast<double>(row[2]), static_cast<double>(row[3]));
      if (retention) recall.values.push_back(last_retention);
      if (hot) recall.values.push_back(last_hot);
    }
    out.tables.push_back(std::move(recall));
    if (retention) out.summary.emplace_back(prefix_ + "retention_recall", last_retention);
    if (hot) out.summary.emplace_back(prefix_ + "hot_key_recall", last_hot);
  }

  // A row per rank over the timed iterations: its hit rate and each oracle's (a rank's accesses
  // are its `hits` + `misses` counters).
  void add_by_rank(comm::Communicator& comm, EvictionResults& out) const {
    ResultTable by_rank{prefix_ + "by_rank",
                        "per rank, timed iterations: its table's hit rate and each oracle's",
                        {"rank", "table"},
                        {}};
    for (const std::size_t o : oracles_) by_rank.columns.push_back(config::kEvictionOracles[o]);
    const std::size_t width = by_rank.columns.size();
    const auto total = timed_totals(flatten(study_.steps()), first_);
    std::vector<double> local(width * static_cast<std::size_t>(comm.size()), 0.0);
    double* row = local.data() + width * static_cast<std::size_t>(comm.rank());
    row[0] = comm.rank();
    row[1] = ratio(total[1], total[0]);
    for (std::size_t i = 0; i < oracles_.size(); ++i) row[2 + i] = ratio(total[6 + oracles_[i]], total[0]);
    by_rank.values.resize(local.size());
    comm.allreduce(std::span<const double>(local), std::span<double>(by_rank.values), comm::ReduceOp::kSum);
    out.tables.push_back(std::move(by_rank));
  }

 private:
  const TableStudy& study_;
  std::string prefix_;
  std::int64_t first_;
  std::vector<std::size_t> oracles_;  // reported, in column order
};

}  // namespace

EvictionStudy::EvictionStudy(const config::EvictionStudy& options, std::vector<MeasuredTable> tables,
                             std::int64_t first_iteration)
    : options_(options), first_iteration_(first_iteration) {
  for (auto& table : tables) tables_.push_back(std::make_unique<TableStudy>(std::move(table), options_));
}

EvictionStudy::~EvictionStudy() = default;

kv::AccessObserver& EvictionStudy::observer(std::size_t table) { return *tables_.at(table); }

void EvictionStudy::end_step(bool last) {
  ++steps_;
  const bool sample = last || steps_ % options_.sample_every == 0;
  for (auto& table : tables_) table->end_step(sample);
}

EvictionResults EvictionStudy::finish(comm::Communicator& comm) {
  EvictionResults out;
  for (auto& table : tables_) {
    // Belady is reported only when every rank kept its whole stream.
    const bool belady = comm.allreduce(table->run_belady() ? 1 : 0, comm::ReduceOp::kMin) == 1;
    if (table->has(Oracle::kBelady) && !belady)
      out.notes.push_back("eviction: Belady's optimum left out for layer " + table->table().layer +
                          ": a rank's access stream outgrew eviction.belady_max_accesses (" +
                          std::to_string(options_.belady_max_accesses) + ")");
    const std::vector<std::int64_t> local = flatten(table->steps());
    std::vector<std::int64_t> sums(local.size());
    comm.allreduce(std::span<const std::int64_t>(local), std::span<std::int64_t>(sums), comm::ReduceOp::kSum);
    const TableResults results(*table, tables_.size() > 1 ? table->table().layer + "." : "", first_iteration_, belady);
    results.add_step_tables(sums, out);
    results.add_summary(sums, out);
    results.add_recall(comm, out);
    results.add_by_rank(comm, out);
  }
  return out;
}

}  // namespace embscale::sim
