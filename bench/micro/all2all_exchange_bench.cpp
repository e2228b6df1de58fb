// Every scheme's exchange of one training step through embscale's Communicator, against bare MPI
// calls that move the same bytes with the same counts, in one binary and one run (the
// exchange costs at most 10 % over the bare collectives).
//
// Run: mpiexec -n 2 build/bench/micro/embscale_micro_all2all --benchmark_repetitions=10
//        [--benchmark_filter=all2all_dense] [--exchange_calibrate]
// (not --benchmark_enable_random_interleaving: each rank would shuffle differently and the ranks
// would enter different collectives).
//
// Work: for each scheme of the registry (distributed_sparse is distributed_slot's factory under
// SOK's name and runs once as distributed_slot), the engine is built on the default config with
// the layer's type set to the scheme and runs one step (forward, loss, backward) of iteration 0's
// batch through a capturing Communicator (lib/collectives/step_capture.hpp). The step's collectives, in
// order, with this rank's counts, are what is timed (collective_replay.hpp): the scheme's own
// counts, not a re-derivation. Before timing, each call runs once each way on a pattern and the
// received bytes must agree (else the benchmark reports an error and the binary exits 1).
//
// Timing: an iteration runs the step's calls in order, each once bare and once through embscale,
// back to back; which side goes first alternates by iteration. Each run's time is the maximum
// over ranks (MPI_Allreduce MAX after it, outside the time): the slowest rank sets the pace, and
// every run starts from ranks that left the previous reduction together. SetIterationTime gets
// both sides' sum; the counters split it (bare_us, embscale_us per step). After the runs rank 0
// prints a table: per scheme and per collective, the median over repetitions of each side's mean
// time (final_runs.hpp), the ratio of those medians, and a paired ratio (record() below) with its
// range over repetitions.
// --exchange_calibrate runs bare MPI on both sides: every ratio should then be 1, and how far it
// strays is this machine's noise floor for the same command.
// Bytes: what this rank hands to other ranks, as the Communicator counts them (communicator.hpp);
// the table gives the largest over ranks.
// What embscale does beyond the bare call: the typed front end, a per-call stats record, a pending
// record; a row datatype (contiguous, cached) instead of element counts; and before a blocking
// alltoallv an agreement on its large-count schedule (one-integer MPI_Allreduce,
// lib/comm/mpi_communicator.hpp). bench/micro/README.md "Scheme exchanges" has what each costs.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collective_replay.hpp"
#include "core/timer.hpp"
#include "embedding/scheme_registry.hpp"
#include "final_runs.hpp"
#include "collectives/step_capture.hpp"

namespace {

using embscale::collectives::CollectiveCall;
using embscale::bench::ReplayedStep;
using Runs = std::vector<std::pair<benchmark::IterationCount, double>>;

// Per repetition (iterations, value), every rank, for key "<scheme>" (the step) and
// "<scheme>/<call>": "<key>/bare", "<key>/embscale" (mean seconds per run), "<key>/paired".
std::map<std::string, Runs> g_runs;

// What the summary prints of a scheme's calls (filled by the first run of its benchmark).
struct CallInfo {
  std::string collective, comm;
  std::uint64_t bytes = 0;  // most bytes any rank sends in the call
};
std::vector<std::pair<std::string, std::vector<CallInfo>>> g_schemes;  // in run order
bool g_failed = false;
bool g_calibrate = false;  // --exchange_calibrate: the embscale side runs bare MPI too

std::unique_ptr<embscale::comm::MpiCommunicator> g_world;
// The replay of the scheme being run; one at a time (data_parallel's holds the table's gradient).
std::string g_replayed;
std::unique_ptr<ReplayedStep> g_replay;
// Parity of the next iteration, continued across runs, so that each side goes first equally often
// even in runs of one iteration (data_parallel's).
std::int64_t g_iteration = 0;

double max_over_ranks(double value) {
  double out = 0;
  MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string describe_comm(const CollectiveCall& call) {
  return (call.comm == 0 ? std::string("layer") : "split" + std::to_string(call.comm)) + "(" + std::to_string(call.ranks) + ")";
}

// Captures and checks `scheme` (collective); "" or why it cannot be timed, agreed by all ranks.
std::string prepare(const embscale::embedding::SchemeEntry& scheme) {
  if (g_replayed == scheme.name) return "";
  g_replay.reset();
  g_replayed = scheme.name;
  std::string error;
  try {
    auto step = embscale::collectives::capture_scheme_step(*g_world, embscale::collectives::scheme_config(scheme, g_world->size()));
    g_replay = std::make_unique<ReplayedStep>(std::move(step), *g_world);
    error = g_replay->check();
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!error.empty())  // only rank 0 reports: every rank says its own reason
    std::fprintf(stderr, "embscale_micro_all2all: rank %d, %s: %s\n", g_world->rank(), scheme.name, error.c_str());
  if (max_over_ranks(error.empty() ? 0.0 : 1.0) > 0) return error.empty() ? "another rank failed its capture or check" : error;
  std::vector<CallInfo> infos;
  for (std::size_t k = 0; k < g_replay->size(); ++k) {
    const CollectiveCall& call = g_replay->call(k);
    infos.push_back({embscale::collectives::collective_name(call.op), describe_comm(call),
                     static_cast<std::uint64_t>(max_over_ranks(static_cast<double>(g_replay->bytes_sent(k))))});
  }
  g_schemes.emplace_back(scheme.name, std::move(infos));
  return "";
}

// Records a repetition of `key` (a call or the whole step): each side's mean time per run, and the
// paired ratio. Each iteration runs both sides back to back, and the second run of a pair is
// systematically faster or slower than the first (with 4 ranks on 2 busy cores, bare against bare,
// a 24-byte alltoall ran 1.2-1.8x slower when it went first). So the per-iteration ratios embscale / bare are
// split by which side ran first: their medians carry the order effect k as r * k and r / k, and
// their geometric mean is r (the crossover design's estimate). Medians, so that a burst of load
// from another process that hits one run drops out where it would move a mean.
void record(const std::string& key, benchmark::IterationCount n, const std::vector<double>& bare,
            const std::vector<double>& ours, const std::vector<bool>& bare_first) {
  double bare_sum = 0, ours_sum = 0;
  std::vector<double> ratios[2];  // [bare ran first]
  for (std::size_t i = 0; i < bare.size(); ++i) {
    bare_sum += bare[i];
    ours_sum += ours[i];
    ratios[bare_first[i] ? 1 : 0].push_back(ours[i] / bare[i]);
  }
  g_runs[key + "/bare"].emplace_back(n, bare_sum / static_cast<double>(n));
  g_runs[key + "/embscale"].emplace_back(n, ours_sum / static_cast<double>(n));
  // A run of one iteration has one order only: its ratio as it is.
  const double paired = ratios[0].empty()   ? median_of(ratios[1])
                        : ratios[1].empty() ? median_of(ratios[0])
                                            : std::sqrt(median_of(ratios[0]) * median_of(ratios[1]));
  g_runs[key + "/paired"].emplace_back(n, paired);
}

// One run of call k by one side; its time, the maximum over ranks.
double timed_run(ReplayedStep& replay, std::size_t k, bool bare) {
  embscale::Stopwatch watch;
  if (bare || g_calibrate)
    replay.run_bare(k);
  else
    replay.run_embscale(k);
  return max_over_ranks(watch.seconds());
}

void BM_SchemeExchange(benchmark::State& state, const embscale::embedding::SchemeEntry* scheme) {
  if (const std::string error = prepare(*scheme); !error.empty()) {
    state.SkipWithError(error.c_str());
    g_failed = true;
    return;
  }
  ReplayedStep& replay = *g_replay;
  const std::size_t calls = replay.size();
  // Seconds per iteration: [call][iteration] of each side, and the step's sums.
  std::vector<std::vector<double>> bare(calls), ours(calls);
  std::vector<double> bare_step, ours_step;
  std::vector<bool> bare_first;
  for (auto _ : state) {
    const bool first = g_iteration++ % 2 == 0;
    bare_first.push_back(first);
    double step_bare = 0, step_ours = 0;
    for (std::size_t k = 0; k < calls; ++k)
      for (const bool side_bare : {first, !first}) {
        const double t = timed_run(replay, k, side_bare);
        (side_bare ? bare : ours)[k].push_back(t);
        (side_bare ? step_bare : step_ours) += t;
      }
    bare_step.push_back(step_bare);
    ours_step.push_back(step_ours);
    state.SetIterationTime(step_bare + step_ours);
  }
  const auto n = state.iterations();
  const std::string name = scheme->name;
  double bytes = 0;
  for (std::size_t k = 0; k < calls; ++k) {
    record(name + "/" + std::to_string(k), n, bare[k], ours[k], bare_first);
    bytes += static_cast<double>(replay.bytes_sent(k));
  }
  record(name, n, bare_step, ours_step, bare_first);
  state.counters["bare_us"] = g_runs[name + "/bare"].back().second * 1e6;
  state.counters["embscale_us"] = g_runs[name + "/embscale"].back().second * 1e6;
  state.counters["paired_ratio"] = g_runs[name + "/paired"].back().second;
  state.counters["bytes"] = bytes;  // this rank's, over the step's calls
}

struct Summary {
  std::vector<double> bare, ours, paired;  // final runs, ascending
  static double median(const std::vector<double>& v) { return v[v.size() / 2]; }
  explicit Summary(const std::string& key)
      : bare(embscale::bench::final_runs_sorted(g_runs[key + "/bare"])),
        ours(embscale::bench::final_runs_sorted(g_runs[key + "/embscale"])),
        paired(embscale::bench::final_runs_sorted(g_runs[key + "/paired"])) {}
  double ratio_of_medians() const { return median(ours) / median(bare); }
};

void print_row(const std::string& scheme, const std::string& k, const std::string& collective, const std::string& comm,
               std::uint64_t bytes, const Summary& s) {
  std::printf("| %s | %s | %s | %s | %llu | %.1f | %.1f | %.3f | %.3f [%.2f, %.2f] |\n", scheme.c_str(), k.c_str(),
              collective.c_str(), comm.c_str(), static_cast<unsigned long long>(bytes), Summary::median(s.bare) * 1e6,
              Summary::median(s.ours) * 1e6, s.ratio_of_medians(), Summary::median(s.paired), s.paired.front(),
              s.paired.back());
}

void print_summary() {
  std::printf("\n%s: median over repetitions of each side's mean time per run, the ratio of those medians, and "
              "the paired ratio (median over repetitions [range])\n",
              g_calibrate ? "CALIBRATION (bare MPI on both sides)" : "embscale / bare MPI");
  std::printf("| scheme | # | collective | communicator | bytes/rank | bare MPI us | embscale us | ratio of medians | "
              "paired ratio [range] |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& [name, infos] : g_schemes) {
    std::uint64_t step_bytes = 0;
    for (std::size_t k = 0; k < infos.size(); ++k) {
      step_bytes += infos[k].bytes;
      print_row(name, std::to_string(k), infos[k].collective, infos[k].comm, infos[k].bytes,
                Summary(name + "/" + std::to_string(k)));
    }
    print_row(name, "", "step", "", step_bytes, Summary(name));
  }
  // scripts/perf-check reads these two lines: the dense all2all exchange of one step.
  if (g_runs.count("all2all_dense/bare")) {
    const Summary s("all2all_dense");
    std::printf("per exchange, median [min, max] of %zu and %zu runs: bare MPI %.1f us [%.1f, %.1f], "
                "embscale %.1f us [%.1f, %.1f]\n", s.bare.size(), s.ours.size(), Summary::median(s.bare) * 1e6,
                s.bare.front() * 1e6, s.bare.back() * 1e6, Summary::median(s.ours) * 1e6, s.ours.front() * 1e6,
                s.ours.back() * 1e6);
    std::printf("ratio embscale / bare MPI (medians): %.3f\n", s.ratio_of_medians());
  }
}

// Only rank 0 prints; every rank runs the same iterations (Google Benchmark decides the count
// from the time it measures, which is the same MAX-over-ranks value everywhere).
class NullReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

void register_schemes() {
  const auto registry = embscale::embedding::schemes();
  for (std::size_t i = 0; i < registry.size(); ++i) {
    bool alias = false;  // a scheme registered under a second name (the same factory) runs once
    for (std::size_t j = 0; j < i; ++j) alias = alias || registry[j].make == registry[i].make;
    if (alias) continue;
    benchmark::RegisterBenchmark(("exchange/" + std::string(registry[i].name)).c_str(), BM_SchemeExchange, &registry[i])
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<char*> args;  // ours removed, the rest for Google Benchmark
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--exchange_calibrate") == 0)
      g_calibrate = true;
    else
      args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) {
    MPI_Finalize();
    return 2;
  }
  g_world = std::make_unique<embscale::comm::MpiCommunicator>(MPI_COMM_WORLD);
  register_schemes();
  if (rank == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    NullReporter null;
    benchmark::RunSpecifiedBenchmarks(&null);
  }
  if (rank == 0) print_summary();
  benchmark::Shutdown();
  g_replay.reset();
  g_world.reset();
  MPI_Finalize();
  return g_failed ? 1 : 0;
}
