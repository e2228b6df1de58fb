// EvictionStudy: the `eviction` section of a run. Each measured dynamic table's
// access stream on this rank (its read calls, AccessObserver) also feeds exact oracles of the
// same capacity, so that the table's hit rate, and what it keeps, can be set against:
//   lru              global LRU (lru_oracle.hpp)
//   lfu              perfect, full-history LFU (lfu_oracle.hpp): what a stationary stream's ideal
//                    converges to; also the exact frequencies behind the hot-key recall
//   score_retention  the top-capacity keys by the table's own score, every key keeping its score
//                    for life (score_retention_oracle.hpp, kEveryKey): what the table would keep
//                    with no buckets and no forgetting
//   unbucketed       the table's own rules exactly, over one global bucket (kResidents): the gap
//                    to it is what bucket-local placement costs
//   belady           Belady's offline optimum (belady_oracle.hpp), computed after the run
// Figures (lib/sim/README.md, results/schema.md "eviction/"), per step and summed over ranks:
//   hit rate         keys the table (in caching mode its fast tier) held / keys it was asked for
//   retention recall |keys the table holds and score_retention holds| / |score_retention's keys|
//   hot-key recall   share of the hot_key_share most frequent keys seen so far (exact counts)
//                    that the table holds
// Nothing of this runs inside a timed phase: observers copy the keys, end_step (after the step's
// clock stopped) feeds the oracles.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "kv/access_observer.hpp"
#include "kv/table_options.hpp"

namespace embscale::sim {

// A rank-identical table of results (the report writes it as /runs/<id>/eviction/<name>).
struct ResultTable {
  std::string name;
  std::string meaning;
  std::vector<std::string> columns;
  std::vector<double> values;  // row-major: rows x columns.size()
};

struct EvictionResults {
  std::vector<ResultTable> tables;
  std::vector<std::pair<std::string, double>> summary;  // /summary columns, in order
  std::vector<std::string> notes;                       // what was left out, and why (printed)
};

// Calls visit(key) for every key the evicting tier holds now.
using ResidentKeys = std::function<void(const std::function<void(std::int64_t)>& visit)>;

// One measured table on this rank.
struct MeasuredTable {
  std::string layer;          // the layer's name
  std::int64_t capacity = 0;  // slots of the tier that evicts (RowStore::evicting_capacity)
  kv::ScoreStrategy strategy = kv::ScoreStrategy::kTimestamp;
  ResidentKeys resident;  // read at recall samples
};

class TableStudy;

class EvictionStudy {
 public:
  // `first_iteration`: the number of the first step (-warmup_iter: warm-up steps are negative,
  // timed ones from 0), steps counting up from it.
  EvictionStudy(const config::EvictionStudy& options, std::vector<MeasuredTable> tables, std::int64_t first_iteration);
  ~EvictionStudy();
  EvictionStudy(const EvictionStudy&) = delete;
  EvictionStudy& operator=(const EvictionStudy&) = delete;

  // Attach to the table's store (RowStore::set_access_observer) before the first step.
  kv::AccessObserver& observer(std::size_t table);
  // After each step, outside its timed region: feeds the step's calls to the oracles and, every
  // sample_every iterations and at the last one, samples the recalls.
  void end_step(bool last);
  // Collective: sums the ranks' figures per step; runs Belady. Every rank gets the same results.
  EvictionResults finish(comm::Communicator& comm);

 private:
  config::EvictionStudy options_;
  std::vector<std::unique_ptr<TableStudy>> tables_;
  std::int64_t first_iteration_;
  std::int64_t steps_ = 0;
};

}  // namespace embscale::sim
