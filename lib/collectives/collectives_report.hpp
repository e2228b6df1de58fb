// A case of `embscale collectives` as a report run (results/schema.md, "Collectives reports"): its
// parameters, per-call series and per-rank timings and counters, and its /summary row; and the
// nccl-tests-style text table.
#pragma once

#include <string>
#include <vector>

#include "collectives/benchmark_run.hpp"
#include "collectives/scheme_replay.hpp"
#include "report/summary.hpp"
#include "report/writer.hpp"

namespace embscale::collectives {

// What a case's parameters need beyond its spec and settings.
struct CaseContext {
  int ranks = 1;
  std::string scheme = "none";  // skewed counts: the scheme whose exchange they are
  double zipf_alpha = 0;        // skewed counts: the workload's Zipf exponent (0: not one)
};

// The run's name under /runs: "<collective>[_skewed]-<type>-<redop>-[root<r>-]<placement>-<bytes>".
std::string case_id(const CaseSpec& spec);
std::vector<report::SummaryField> case_parameters(const CaseSpec& spec, const RunSettings& settings,
                                                  const CaseResult& result, const CaseContext& context);
report::RunRecord make_case_record(const CaseSpec& spec, const RunSettings& settings, const CaseResult& result,
                                   const CaseContext& context);
report::SummaryRow make_case_summary(const CaseSpec& spec, const RunSettings& settings, const CaseResult& result,
                                     const CaseContext& context);

// A replay (`--replay`, scheme_replay.hpp) as report runs, one per call and one for the step:
// named "replay_<scheme>-<k>-<collective>" and "replay_<scheme>-step", with a case's parameters
// (counts "replay"; size_bytes the most bytes a rank sends; time_combine "max": each run's time
// is the slowest rank's), and their /summary rows (the case columns, plus paired_overhead).
std::vector<report::RunRecord> make_replay_records(const SchemeReplay& replay, const RunSettings& settings,
                                                   const CaseContext& context);
std::vector<report::SummaryRow> make_replay_summary(const SchemeReplay& replay, const RunSettings& settings,
                                                    const CaseContext& context);

// The table: a header per (collective, counts) and one line per size, with the out-of-place and
// in-place cases side by side as nccl-tests prints them (a placement the collective lacks shows
// as "-"), plus the bare-MPI time and the Communicator's overhead, and for skewed counts the
// max/mean over ranks of the bytes a rank sends and receives.
std::string table_header(const CaseSpec& spec, const RunSettings& settings, int ranks);
std::string table_line(const CaseSpec& spec, const CaseResult* out_of_place, const CaseResult* in_place);

}  // namespace embscale::collectives
