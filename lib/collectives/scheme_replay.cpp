#include "collectives/scheme_replay.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "collectives/element_type.hpp"
#include "collectives/step_replay.hpp"
#include "core/error.hpp"
#include "core/timer.hpp"
#include "embedding/scheme_registry.hpp"

namespace embscale::collectives {
namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string describe_comm(const CollectiveCall& call) {
  return (call.comm == 0 ? std::string("layer") : "split" + std::to_string(call.comm)) + "(" +
         std::to_string(call.ranks) + ")";
}

// One run of call k by one side; its time, the maximum over ranks.
double timed_run(comm::Communicator& world, ReplayedStep& replay, std::size_t k, bool bare) {
  Stopwatch watch;
  if (bare) replay.run_bare(k);
  else replay.run_embscale(k);
  const double seconds = watch.seconds();
  return world.allreduce(seconds, comm::ReduceOp::kMax);
}

}  // namespace

double ReplayTimes::bare_median() const { return median_of(bare); }
double ReplayTimes::embscale_median() const { return median_of(embscale); }
double ReplayTimes::ratio_of_medians() const { return embscale_median() / bare_median(); }

double ReplayTimes::paired_ratio() const {
  std::vector<double> ratios[2];  // [bare went first]
  for (std::size_t i = 0; i < bare.size(); ++i) ratios[bare_first[i] ? 1 : 0].push_back(embscale[i] / bare[i]);
  if (ratios[0].empty()) return median_of(ratios[1]);  // one order only: its ratio as it is
  if (ratios[1].empty()) return median_of(ratios[0]);
  return std::sqrt(median_of(ratios[0]) * median_of(ratios[1]));
}

SchemeReplay replay_scheme_step(comm::MpiCommunicator& world, const config::Config& config,
                                const RunSettings& settings) {
  EMBSCALE_EXPECTS(!config.embeddings.empty(), "a config has at least one embedding layer");
  SchemeReplay result;
  result.layer = config.embeddings.front().name;
  result.scheme = embedding::scheme_of(config.embeddings.front()).name;
  ReplayedStep replay(capture_scheme_step(world, config), world);

  std::string wrong = replay.check();
  // Every rank learns whether any rank differed; each keeps its own description.
  if (world.allreduce(wrong.empty() ? 0 : 1, comm::ReduceOp::kMax) > 0 && wrong.empty())
    wrong = "another rank received other bytes through embscale than through bare MPI";
  result.wrong = wrong;
  for (std::size_t k = 0; k < replay.size(); ++k) {
    const CollectiveCall& call = replay.call(k);
    ReplayedCall info;
    info.collective = collective_name(call.op);
    info.type = call.type.type == comm::DataType::kBytes ? "bytes" : std::string(element_type(call.type.type).name);
    info.communicator = describe_comm(call);
    if (call.op == CollectiveOp::kReduceScatter || call.op == CollectiveOp::kAllreduce)
      info.redop = std::string(reduce_op_name(call.reduce));
    info.in_place = call.in_place;
    info.bytes_max = world.allreduce(static_cast<std::uint64_t>(replay.bytes_sent(k)), comm::ReduceOp::kMax);
    result.step_bytes_max += info.bytes_max;
    result.calls.push_back(std::move(info));
  }

  const std::size_t calls = replay.size();
  const std::size_t timed = settings.rounds * settings.iterations;
  for (std::size_t iteration = 0; iteration < settings.warmup + timed; ++iteration) {
    const bool bare_first = iteration % 2 == 0;
    const bool record = iteration >= settings.warmup;
    double step_bare = 0, step_ours = 0;
    for (std::size_t k = 0; k < calls; ++k)
      for (const bool side_bare : {bare_first, !bare_first}) {
        const double t = timed_run(world, replay, k, side_bare || settings.calibrate);
        if (!record) continue;
        ReplayTimes& times = result.calls[k].times;
        (side_bare ? times.bare : times.embscale).push_back(t);
        (side_bare ? step_bare : step_ours) += t;
      }
    if (!record) continue;
    for (std::size_t k = 0; k < calls; ++k) result.calls[k].times.bare_first.push_back(bare_first);
    result.step.bare.push_back(step_bare);
    result.step.embscale.push_back(step_ours);
    result.step.bare_first.push_back(bare_first);
  }
  return result;
}

std::string replay_table(const SchemeReplay& replay, const RunSettings& settings, int ranks) {
  std::string text = "#\n# replay of " + replay.scheme + "'s step (layer " + replay.layer + ") on " +
                     std::to_string(ranks) + " ranks" +
                     (settings.calibrate ? " [calibration: bare MPI on both sides]" : "") + ": " +
                     std::to_string(settings.rounds * settings.iterations) +
                     " runs per side, each the slowest rank's time; medians, their ratio, and the paired ratio\n";
  text +=
      "#  call        collective        type  communicator     bytes/rank    bare MPI (us)    embscale (us)"
      "    ratio   paired\n";
  const auto line = [&](const std::string& call, const std::string& collective, const std::string& type,
                        const std::string& comm, std::uint64_t bytes, const ReplayTimes& t) {
    char row[256];
    std::snprintf(row, sizeof row, "%7s  %16s  %10s  %12s  %13llu  %15.1f  %15.1f  %7.3f  %7.3f\n", call.c_str(),
                  collective.c_str(), type.c_str(), comm.c_str(), static_cast<unsigned long long>(bytes),
                  t.bare_median() * 1e6, t.embscale_median() * 1e6, t.ratio_of_medians(), t.paired_ratio());
    text += row;
  };
  for (std::size_t k = 0; k < replay.calls.size(); ++k) {
    const ReplayedCall& c = replay.calls[k];
    line(std::to_string(k), c.collective, c.type, c.communicator, c.bytes_max, c.times);
  }
  line("step", "", "", "", replay.step_bytes_max, replay.step);
  // scripts/perf-check reads this line.
  char ratio[160];
  std::snprintf(ratio, sizeof ratio, "# replay %s: step ratio embscale / bare MPI (medians): %.3f\n",
                replay.scheme.c_str(), replay.step.ratio_of_medians());
  return text + ratio;
}

}  // namespace embscale::collectives
