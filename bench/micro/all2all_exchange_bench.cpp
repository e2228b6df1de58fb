// The dense all2all exchange of one batch (the forward communication of All2AllDenseEmbedding:
// counts, distinct keys to owners, rows back) through embscale's Communicator, against the same
// bytes moved by bare MPI_Alltoall + MPI_Alltoallv calls, in one binary and one run.
//
// Run: mpiexec -n 2 build/bench/micro/embscale_micro_all2all --benchmark_repetitions=10
// (not --benchmark_enable_random_interleaving: each rank would shuffle differently and the ranks
// would enter different collectives).
// What embscale does beyond the bare calls: each blocking alltoallv first agrees on its
// large-count schedule with a one-integer allreduce (lib/comm/mpi_communicator.hpp).
// Timing: each iteration's time is the maximum over ranks (MPI_Allreduce MAX after the timed
// region), fed back with SetIterationTime: the slowest rank sets the pace. Bandwidth follows
// nccl-tests' alltoall convention: algbw = bytes sent by a rank (incl. to itself) / time,
// busbw = algbw * (n - 1) / n.
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <string>

#include "final_runs.hpp"
#include "comm/mpi_communicator.hpp"
#include "core/timer.hpp"
#include "embedding/key_router.hpp"
#include "workloads/synthetic.hpp"

namespace {

using embscale::Key;

// One batch of the embedded default's shape: 4096 samples, 8 slots of 100000 keys, 4 keys per
// slot, Zipf 1.05, dim 32 (kept here so the benchmark does not depend on config parsing).
struct ExchangeFixture {
  static constexpr std::size_t kDim = 32;
  std::vector<Key> send_keys;
  std::vector<std::size_t> send_counts, recv_counts;
  std::vector<Key> recv_keys;
  std::vector<float> rows_out, rows_back;
  std::size_t bytes_per_rank = 0;  // bytes this rank sends in the whole exchange

  explicit ExchangeFixture(embscale::comm::Communicator& comm) {
    embscale::config::DataLayer data;
    data.slot_size_array.assign(8, 100000);
    data.slot_num = 8;
    data.label_dim = 1;
    embscale::config::SlotWorkload slot;  // Zipf 1.05, 4 keys per bag
    slot.keys.zipf_alpha = 1.05;
    slot.nnz = 4;
    data.synthetic = embscale::config::SyntheticSource::same_for_all(slot, data.slot_num);
    const embscale::workloads::SyntheticGenerator gen(data, 20261122, 4096);
    const auto batch = gen.generate(0, comm.rank(), comm.size());
    auto routed = embscale::embedding::route_keys(batch.keys, embscale::embedding::ModuloSharding{comm.size()});
    send_keys = std::move(routed.send_keys);
    send_counts = std::move(routed.send_counts);
    recv_counts.assign(send_counts.size(), 0);
    comm.alltoall(std::span<const std::size_t>(send_counts), std::span<std::size_t>(recv_counts), 1);
    std::size_t received = 0;
    for (auto c : recv_counts) received += c;
    recv_keys.resize(received);
    rows_out.resize(received * kDim, 1.0f);
    rows_back.resize(send_keys.size() * kDim);
    bytes_per_rank = send_counts.size() * sizeof(std::size_t) + send_keys.size() * sizeof(Key) +
                     received * kDim * sizeof(float);
  }
};

// (iterations, seconds per exchange) of every run of a benchmark, by side; every rank.
std::map<std::string, std::vector<std::pair<benchmark::IterationCount, double>>> g_runs;

double max_over_ranks(double seconds) {
  double out = 0;
  MPI_Allreduce(&seconds, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

void report(benchmark::State& state, const char* name, const ExchangeFixture& f, int ranks, double total_seconds) {
  const double per_iter = total_seconds / static_cast<double>(state.iterations());
  const double algbw = static_cast<double>(f.bytes_per_rank) / per_iter;
  state.counters["bytes"] = static_cast<double>(f.bytes_per_rank);
  state.counters["algbw_GBps"] = algbw / 1e9;
  state.counters["busbw_GBps"] = algbw * (ranks - 1) / ranks / 1e9;
  g_runs[name].emplace_back(state.iterations(), per_iter);
}

void BM_EmbscaleExchange(benchmark::State& state) {
  embscale::comm::MpiCommunicator world(MPI_COMM_WORLD);
  ExchangeFixture f(world);
  std::vector<std::size_t> counts(f.recv_counts.size());
  double total = 0;
  for (auto _ : state) {
    embscale::Stopwatch watch;
    world.alltoall(std::span<const std::size_t>(f.send_counts), std::span<std::size_t>(counts), 1);
    world.alltoallv(std::span<const Key>(f.send_keys), std::span<const std::size_t>(f.send_counts),
                    std::span<Key>(f.recv_keys), std::span<const std::size_t>(f.recv_counts));
    world.alltoallv(std::span<const float>(f.rows_out), std::span<const std::size_t>(f.recv_counts),
                    std::span<float>(f.rows_back), std::span<const std::size_t>(f.send_counts), ExchangeFixture::kDim);
    const double t = max_over_ranks(watch.seconds());
    state.SetIterationTime(t);
    total += t;
  }
  report(state, "embscale", f, world.size(), total);
}

std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> d(counts.size(), 0);
  for (std::size_t i = 1; i < counts.size(); ++i) d[i] = d[i - 1] + counts[i - 1];
  return d;
}

void BM_BareMpiAlltoallv(benchmark::State& state) {
  embscale::comm::MpiCommunicator world(MPI_COMM_WORLD);
  ExchangeFixture f(world);
  const std::size_t n = f.send_counts.size();
  std::vector<int> sc(n), rc(n), sc_rows(n), rc_rows(n);
  for (std::size_t r = 0; r < n; ++r) {
    sc[r] = static_cast<int>(f.send_counts[r]);
    rc[r] = static_cast<int>(f.recv_counts[r]);
    sc_rows[r] = sc[r] * static_cast<int>(ExchangeFixture::kDim);
    rc_rows[r] = rc[r] * static_cast<int>(ExchangeFixture::kDim);
  }
  const auto sd = displacements(sc), rd = displacements(rc), sd_rows = displacements(sc_rows), rd_rows = displacements(rc_rows);
  std::vector<unsigned long> counts_out(f.send_counts.begin(), f.send_counts.end()), counts_in(n);
  double total = 0;
  for (auto _ : state) {
    embscale::Stopwatch watch;
    MPI_Alltoall(counts_out.data(), 1, MPI_UNSIGNED_LONG, counts_in.data(), 1, MPI_UNSIGNED_LONG, MPI_COMM_WORLD);
    MPI_Alltoallv(f.send_keys.data(), sc.data(), sd.data(), MPI_INT64_T, f.recv_keys.data(), rc.data(), rd.data(),
                  MPI_INT64_T, MPI_COMM_WORLD);
    MPI_Alltoallv(f.rows_out.data(), rc_rows.data(), rd_rows.data(), MPI_FLOAT, f.rows_back.data(), sc_rows.data(),
                  sd_rows.data(), MPI_FLOAT, MPI_COMM_WORLD);
    const double t = max_over_ranks(watch.seconds());
    state.SetIterationTime(t);
    total += t;
  }
  report(state, "bare", f, world.size(), total);
}

BENCHMARK(BM_BareMpiAlltoallv)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(1.0);
BENCHMARK(BM_EmbscaleExchange)->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(1.0);

// Only rank 0 prints; every rank runs the same iterations (Google Benchmark decides the count
// from the time it measures, which is the same MAX-over-ranks value everywhere).
class NullReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  benchmark::Initialize(&argc, argv);
  if (rank == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    NullReporter null;
    benchmark::RunSpecifiedBenchmarks(&null);
  }
  if (rank == 0 && g_runs.count("bare") && g_runs.count("embscale")) {
    const auto bare = embscale::bench::final_runs_sorted(g_runs["bare"]);
    const auto ours = embscale::bench::final_runs_sorted(g_runs["embscale"]);
    const auto median = [](const std::vector<double>& v) { return v[v.size() / 2]; };
    std::printf("per exchange, median [min, max] of %zu and %zu runs: bare MPI %.1f us [%.1f, %.1f], "
                "embscale %.1f us [%.1f, %.1f]\n", bare.size(), ours.size(), median(bare) * 1e6, bare.front() * 1e6,
                bare.back() * 1e6, median(ours) * 1e6, ours.front() * 1e6, ours.back() * 1e6);
    std::printf("ratio embscale / bare MPI (medians): %.3f\n", median(ours) / median(bare));
  }
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
