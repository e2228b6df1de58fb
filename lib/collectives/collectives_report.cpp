#include "collectives/collectives_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace embscale::collectives {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string redop_of(const CaseSpec& spec) {
  return spec.bench->traits().reduces ? std::string(reduce_op_name(spec.op)) : "none";
}
std::int64_t root_of(const CaseSpec& spec) { return spec.bench->traits().rooted ? spec.root : -1; }

std::string formatted(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// time, algbw, busbw, #wrong, bare MPI time and overhead (of the medians) of one placement, or dashes.
std::string placement_columns(const CaseResult* r) {
  if (!r) return "         -       -       -      -         -      -";
  std::string s = formatted("%10.2f", r->time_s * 1e6) + formatted("%8.2f", r->algbw_GBps) +
                  formatted("%8.2f", r->busbw_GBps) + formatted("%7.0f", static_cast<double>(r->wrong));
  if (r->measured_bare) s += formatted("%10.2f", r->bare_time_s * 1e6) + formatted("%+7.1f", r->overhead() * 100);
  else s += "         -      -";
  return s;
}

// What identifies a run of a collectives report beside the settings and the context. The sweep's
// cases and the replays fill it, and one builder turns it into fields, so both kinds of run carry
// the same parameters in the same order (merge and /summary need every row alike).
struct CaseParameters {
  std::string collective, counts, type, redop;
  std::int64_t root = -1;
  Placement placement = Placement::kOutOfPlace;
  bool blocking = true, barrier_each_call = false;
  std::int64_t size_bytes = 0, count = 0;
  TimeCombine combine = TimeCombine::kAvg;
};

std::vector<report::SummaryField> parameter_fields(const CaseParameters& p, const RunSettings& settings,
                                                   const CaseContext& context) {
  return {
      {"collective", p.collective},
      {"counts", p.counts},
      {"type", p.type},
      {"redop", p.redop},
      {"root", p.root},
      {"placement", std::string(placement_name(p.placement))},
      {"blocking", std::int64_t{p.blocking ? 1 : 0}},
      {"barrier_each_call", std::int64_t{p.barrier_each_call ? 1 : 0}},
      {"size_bytes", p.size_bytes},
      {"count", p.count},
      {"ranks", std::int64_t{context.ranks}},
      {"iterations", static_cast<std::int64_t>(settings.iterations)},
      {"rounds", static_cast<std::int64_t>(settings.rounds)},
      {"time_combine", std::string(time_combine_name(p.combine))},
      {"calibrate", std::int64_t{settings.calibrate ? 1 : 0}},
      {"scheme", context.scheme},
      {"zipf_alpha", context.zipf_alpha},
  };
}

// A run's /summary figures (results/schema.md), in seconds and bytes; NaN where not measured.
struct CaseFigures {
  double time_s = kNaN, time_min_s = kNaN, time_max_s = kNaN, algbw_GBps = kNaN, busbw_GBps = kNaN;
  std::uint64_t wrong = 0;
  double bare_time_s = kNaN, median_s = kNaN, bare_median_s = kNaN, overhead = kNaN;
  double send_bytes_max = kNaN, send_bytes_mean = kNaN, recv_bytes_max = kNaN, recv_bytes_mean = kNaN;
  double paired_overhead = kNaN;
};

// The row of a run: its id, its parameters, then its figures (imbalances: max / mean).
report::SummaryRow summary_row(const std::string& id, std::vector<report::SummaryField> parameters,
                               const CaseFigures& f) {
  const auto ratio = [](double max, double mean) { return mean > 0 ? max / mean : kNaN; };
  report::SummaryRow row{{"run_id", id}};
  for (auto& field : parameters) row.push_back(std::move(field));
  const report::SummaryRow figures{
      {"time_us", f.time_s * 1e6},
      {"time_min_us", f.time_min_s * 1e6},
      {"time_max_us", f.time_max_s * 1e6},
      {"algbw_GBps", f.algbw_GBps},
      {"busbw_GBps", f.busbw_GBps},
      {"wrong", static_cast<std::int64_t>(f.wrong)},
      {"mpi_time_us", f.bare_time_s * 1e6},
      {"time_median_us", f.median_s * 1e6},
      {"mpi_time_median_us", f.bare_median_s * 1e6},
      {"overhead", f.overhead},
      {"send_bytes_max", f.send_bytes_max},
      {"send_bytes_mean", f.send_bytes_mean},
      {"send_imbalance", ratio(f.send_bytes_max, f.send_bytes_mean)},
      {"recv_bytes_max", f.recv_bytes_max},
      {"recv_bytes_mean", f.recv_bytes_mean},
      {"recv_imbalance", ratio(f.recv_bytes_max, f.recv_bytes_mean)},
      {"paired_overhead", f.paired_overhead},
  };
  row.insert(row.end(), figures.begin(), figures.end());
  return row;
}

}  // namespace

std::string case_id(const CaseSpec& spec) {
  const auto& t = spec.bench->traits();
  std::string id = std::string(t.name) + (spec.counts == "skewed" ? "_skewed" : "") + "-" + std::string(spec.type.name);
  if (t.reduces) id += "-" + redop_of(spec);
  if (t.rooted) id += "-root" + std::to_string(spec.root);
  return id + "-" + std::string(placement_name(spec.placement)) + "-" + std::to_string(spec.requested_bytes);
}

std::vector<report::SummaryField> case_parameters(const CaseSpec& spec, const RunSettings& settings,
                                                  const CaseResult& result, const CaseContext& context) {
  CaseParameters p;
  p.collective = std::string(spec.bench->traits().name);
  p.counts = spec.counts;
  p.type = std::string(spec.type.name);
  p.redop = redop_of(spec);
  p.root = root_of(spec);
  p.placement = spec.placement;
  p.blocking = settings.blocking;
  p.barrier_each_call = settings.barrier_each_call;
  p.size_bytes = static_cast<std::int64_t>(std::llround(result.layout.size_bytes));
  p.count = static_cast<std::int64_t>(result.layout.count);
  p.combine = settings.combine;
  return parameter_fields(p, settings, context);
}

report::RunRecord make_case_record(const CaseSpec& spec, const RunSettings& settings, const CaseResult& result,
                                   const CaseContext& context) {
  report::RunRecord record;
  record.id = case_id(spec);
  record.parameters = case_parameters(spec, settings, result, context);
  record.phase_names = {"collective"};
  record.phase_meanings = {"one call of the collective through the Communicator"};
  record.timings["collective"] = result.times;
  record.counters["bytes_sent"] = result.bytes_sent;
  record.counters["bytes_recv"] = result.bytes_recv;
  record.series["step_time"] = result.time_series;
  if (result.measured_bare) record.series["mpi_time"] = result.bare_series;
  return record;
}

report::SummaryRow make_case_summary(const CaseSpec& spec, const RunSettings& settings, const CaseResult& result,
                                     const CaseContext& context) {
  const bool bare = result.measured_bare;
  const CaseFigures f{.time_s = result.time_s,
                      .time_min_s = result.time_min_s,
                      .time_max_s = result.time_max_s,
                      .algbw_GBps = result.algbw_GBps,
                      .busbw_GBps = result.busbw_GBps,
                      .wrong = result.wrong,
                      .bare_time_s = bare ? result.bare_time_s : kNaN,
                      .median_s = result.median_s,
                      .bare_median_s = bare ? result.bare_median_s : kNaN,
                      .overhead = bare ? result.overhead() : kNaN,
                      .send_bytes_max = result.send_bytes_max,
                      .send_bytes_mean = result.send_bytes_mean,
                      .recv_bytes_max = result.recv_bytes_max,
                      .recv_bytes_mean = result.recv_bytes_mean};
  return summary_row(case_id(spec), case_parameters(spec, settings, result, context), f);
}

std::string table_header(const CaseSpec& spec, const RunSettings& settings, int ranks) {
  const auto& t = spec.bench->traits();
  const std::string bare = settings.nccl ? "NCCL" : "MPI";
  const char* column = settings.nccl ? "  nccl time" : "   mpi time";
  std::string h = "#\n# " + std::string(t.name) + (spec.counts == "skewed" ? " (skewed counts)" : "") +
                  (settings.nccl ? " over NCCL (device buffers)" : "") +
                  (settings.calibrate ? " [calibration: bare " + bare + " on both sides]" : "") + " on " +
                  std::to_string(ranks) + " ranks, " + (settings.blocking ? "blocking" : "non-blocking") +
                  (settings.barrier_each_call ? ", a barrier after each call (OSU)" : ", calls back to back") +
                  ", times: " + std::string(time_combine_name(settings.combine)) + " over ranks\n" +
                  "# time: mean of a call (as nccl-tests); ovh: the Communicator's median call over bare " + bare +
                  "'s, - 1\n";
  h += "#                                                     out-of-place                                       "
       "in-place\n";
  h += std::string("#        size         count      type   redop  root      time   algbw   busbw #wrong") + column +
       "    ovh      time   algbw   busbw #wrong" + column + "    ovh";
  if (spec.counts == "skewed") h += "  send max/mean  recv max/mean";
  h += "\n#         (B)    (elements)                            (us)  (GB/s)  (GB/s)             (us)    (%)"
       "      (us)  (GB/s)  (GB/s)             (us)    (%)\n";
  return h;
}

std::string table_line(const CaseSpec& spec, const CaseResult* out_of_place, const CaseResult* in_place) {
  const CaseResult& any = out_of_place ? *out_of_place : *in_place;
  char head[96];
  std::snprintf(head, sizeof head, "%13.0f  %12zu  %8s  %6s  %4lld", any.layout.size_bytes, any.layout.count,
                std::string(spec.type.name).c_str(), redop_of(spec).c_str(), static_cast<long long>(root_of(spec)));
  std::string line = std::string(head) + placement_columns(out_of_place) + placement_columns(in_place);
  if (spec.counts == "skewed")
    line += formatted("%15.3f", any.send_bytes_mean > 0 ? any.send_bytes_max / any.send_bytes_mean : kNaN) +
            formatted("%15.3f", any.recv_bytes_mean > 0 ? any.recv_bytes_max / any.recv_bytes_mean : kNaN);
  return line + "\n";
}

namespace {

// One replayed call, or the step (collective "step"), as the report sees it.
struct ReplayRun {
  std::string id, collective, type, redop;
  bool in_place = false;
  std::uint64_t bytes = 0;
  const ReplayTimes* times = nullptr;
};

std::vector<ReplayRun> replay_runs(const SchemeReplay& replay) {
  std::vector<ReplayRun> runs;
  for (std::size_t k = 0; k < replay.calls.size(); ++k) {
    const ReplayedCall& c = replay.calls[k];
    runs.push_back({"replay_" + replay.scheme + "-" + std::to_string(k) + "-" + c.collective, c.collective, c.type,
                    c.redop, c.in_place, c.bytes_max, &c.times});
  }
  runs.push_back(
      {"replay_" + replay.scheme + "-step", "step", "mixed", "none", false, replay.step_bytes_max, &replay.step});
  return runs;
}

// A replayed call (or the step): calls back to back, each run the slowest rank's time.
std::vector<report::SummaryField> replay_parameters(const ReplayRun& run, const RunSettings& settings,
                                                    const CaseContext& context) {
  CaseParameters p;
  p.collective = run.collective;
  p.counts = "replay";
  p.type = run.type;
  p.redop = run.redop;
  p.placement = run.in_place ? Placement::kInPlace : Placement::kOutOfPlace;
  p.size_bytes = static_cast<std::int64_t>(run.bytes);
  p.combine = TimeCombine::kMax;
  return parameter_fields(p, settings, context);
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (const double x : v) sum += x;
  return v.empty() ? kNaN : sum / static_cast<double>(v.size());
}

}  // namespace

std::vector<report::RunRecord> make_replay_records(const SchemeReplay& replay, const RunSettings& settings,
                                                   const CaseContext& context) {
  std::vector<report::RunRecord> records;
  for (const ReplayRun& run : replay_runs(replay)) {
    report::RunRecord record;
    record.id = run.id;
    record.parameters = replay_parameters(run, settings, context);
    record.phase_names = {"collective"};
    record.phase_meanings = {run.collective == "step" ? "the step's calls through the Communicator, summed"
                                                      : "one call through the Communicator (the slowest rank's time)"};
    record.timings["collective"] = run.times->embscale;
    record.series["step_time"] = run.times->embscale;
    record.series["mpi_time"] = run.times->bare;
    records.push_back(std::move(record));
  }
  return records;
}

std::vector<report::SummaryRow> make_replay_summary(const SchemeReplay& replay, const RunSettings& settings,
                                                    const CaseContext& context) {
  std::vector<report::SummaryRow> rows;
  for (const ReplayRun& run : replay_runs(replay)) {
    const ReplayTimes& t = *run.times;
    CaseFigures f;
    f.time_s = mean_of(t.embscale);
    f.time_min_s = *std::min_element(t.embscale.begin(), t.embscale.end());
    f.time_max_s = *std::max_element(t.embscale.begin(), t.embscale.end());
    f.algbw_GBps = f.time_s > 0 ? static_cast<double>(run.bytes) / f.time_s / 1e9 : kNaN;
    f.wrong = replay.wrong.empty() ? 0 : 1;
    f.bare_time_s = mean_of(t.bare);
    f.median_s = t.embscale_median();
    f.bare_median_s = t.bare_median();
    f.overhead = t.ratio_of_medians() - 1;
    f.send_bytes_max = static_cast<double>(run.bytes);
    f.paired_overhead = t.paired_ratio() - 1;
    rows.push_back(summary_row(run.id, replay_parameters(run, settings, context), f));
  }
  return rows;
}

}  // namespace embscale::collectives
