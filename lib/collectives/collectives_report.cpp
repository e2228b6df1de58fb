#include "collectives/collectives_report.hpp"

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
  if (r->measured_bare)
    s += formatted("%10.2f", r->bare_time_s * 1e6) + formatted("%+7.1f", r->overhead() * 100);
  else
    s += "         -      -";
  return s;
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
  return {
      {"collective", std::string(spec.bench->traits().name)},
      {"counts", spec.counts},
      {"type", std::string(spec.type.name)},
      {"redop", redop_of(spec)},
      {"root", root_of(spec)},
      {"placement", std::string(placement_name(spec.placement))},
      {"blocking", std::int64_t{settings.blocking ? 1 : 0}},
      {"barrier_each_call", std::int64_t{settings.barrier_each_call ? 1 : 0}},
      {"size_bytes", static_cast<std::int64_t>(std::llround(result.layout.size_bytes))},
      {"count", static_cast<std::int64_t>(result.layout.count)},
      {"ranks", std::int64_t{context.ranks}},
      {"iterations", static_cast<std::int64_t>(settings.iterations)},
      {"rounds", static_cast<std::int64_t>(settings.rounds)},
      {"time_combine", std::string(time_combine_name(settings.combine))},
      {"calibrate", std::int64_t{settings.calibrate ? 1 : 0}},
      {"scheme", context.scheme},
      {"zipf_alpha", context.zipf_alpha},
  };
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
  report::SummaryRow row{{"run_id", case_id(spec)}};
  for (auto& field : case_parameters(spec, settings, result, context)) row.push_back(std::move(field));
  const double bare_us = result.measured_bare ? result.bare_time_s * 1e6 : kNaN;
  const auto ratio = [](double max, double mean) { return mean > 0 ? max / mean : kNaN; };
  const report::SummaryRow figures{
      {"time_us", result.time_s * 1e6},
      {"time_min_us", result.time_min_s * 1e6},
      {"time_max_us", result.time_max_s * 1e6},
      {"algbw_GBps", result.algbw_GBps},
      {"busbw_GBps", result.busbw_GBps},
      {"wrong", static_cast<std::int64_t>(result.wrong)},
      {"mpi_time_us", bare_us},
      {"time_median_us", result.median_s * 1e6},
      {"mpi_time_median_us", result.measured_bare ? result.bare_median_s * 1e6 : kNaN},
      {"overhead", result.measured_bare ? result.overhead() : kNaN},
      {"send_bytes_max", result.send_bytes_max},
      {"send_bytes_mean", result.send_bytes_mean},
      {"send_imbalance", ratio(result.send_bytes_max, result.send_bytes_mean)},
      {"recv_bytes_max", result.recv_bytes_max},
      {"recv_bytes_mean", result.recv_bytes_mean},
      {"recv_imbalance", ratio(result.recv_bytes_max, result.recv_bytes_mean)},
  };
  row.insert(row.end(), figures.begin(), figures.end());
  return row;
}

std::string table_header(const CaseSpec& spec, const RunSettings& settings, int ranks) {
  const auto& t = spec.bench->traits();
  std::string h = "#\n# " + std::string(t.name) + (spec.counts == "skewed" ? " (skewed counts)" : "") +
                  (settings.calibrate ? " [calibration: bare MPI on both sides]" : "") + " on " +
                  std::to_string(ranks) + " ranks, " + (settings.blocking ? "blocking" : "non-blocking") +
                  (settings.barrier_each_call ? ", a barrier after each call (OSU)" : ", calls back to back") +
                  ", times: " + std::string(time_combine_name(settings.combine)) + " over ranks\n" +
                  "# time: mean of a call (as nccl-tests); ovh: the Communicator's median call over bare MPI's, - 1\n";
  h += "#                                                     out-of-place                                       "
       "in-place\n";
  h += "#        size         count      type   redop  root      time   algbw   busbw #wrong   mpi time    ovh"
       "      time   algbw   busbw #wrong   mpi time    ovh";
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

}  // namespace embscale::collectives
