// One case of `embscale collectives` (a collective, its counts, type, op, root, placement and size)
// run the way nccl-tests and the OSU micro-benchmarks time it, through the Communicator and as bare
// MPI, then checked.
//
// Timing (the same loop for both sides, bare_mpi.hpp's timed_calls):
//   * warm-up: -w calls of each side, untimed;
//   * rounds: each round times -n calls of each side, a barrier (untimed) before each side's
//     calls; the side that goes first alternates by round, so neither always runs on a cache or
//     a peer warmed by the other; calls go back to back as in nccl-tests, or with --barrier as
//     in OSU (an untimed barrier after each call, so each starts with the ranks aligned);
//   * per rank: each call's time, and their average; over ranks (OSU): min, avg and max of the
//     per-rank averages, and the time nccl-tests' -a chooses (rank 0's, avg, min or max);
//   * the Communicator's overhead compares medians (each rank's median call, combined by -a):
//     on a shared machine one descheduled call can cost a hundred small ones, and a mean would
//     charge that to whichever side it hit.
// Check (-c k): k more calls through the Communicator, each on fresh inputs and a receive buffer
// filled with garbage, every element compared with data_check.hpp's exact expectation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/bare_nccl.hpp"
#include "collectives/collective.hpp"
#include "collectives/element_type.hpp"
#include "comm/mpi_communicator.hpp"
#include "comm/nccl_communicator.hpp"

namespace embscale::collectives {

// nccl-tests' -a: how one time is drawn from the ranks' averages.
enum class TimeCombine { kRank0 = 0, kAvg = 1, kMin = 2, kMax = 3 };
std::string_view time_combine_name(TimeCombine combine);

struct RunSettings {
  std::size_t iterations = 20;  // -n: timed calls per side and round
  std::size_t warmup = 5;       // -w
  std::size_t rounds = 2;       // --rounds
  std::size_t checks = 1;       // -c: checked calls (0: no check)
  TimeCombine combine = TimeCombine::kAvg;
  bool blocking = true;            // -z 1
  bool barrier_each_call = false;  // --barrier: OSU's timing
  bool baseline = true;            // time bare MPI too (where MPI has the call)
  bool calibrate = false;          // time the bare side on both sides: the harness's noise floor
  bool nccl = false;               // --backend nccl: the bare side is NCCL (run_case's `nccl`)
};

struct CaseSpec {
  const CollectiveBench* bench = nullptr;
  std::string counts = "equal";  // "skewed": alltoallv over a scheme's exchange
  ElementType type;
  comm::ReduceOp op = comm::ReduceOp::kSum;  // used when the collective reduces
  int root = 0;                              // used when the collective is rooted
  Placement placement = Placement::kOutOfPlace;
  std::uint64_t requested_bytes = 0;  // -b ... -e: the size asked for
};

struct CaseResult {
  Layout layout;  // count and size_bytes as nccl-tests reports them
  bool measured_bare = false;
  // This rank, one entry per timed call (rounds * iterations).
  std::vector<double> times, bare_times;
  std::vector<std::int64_t> bytes_sent, bytes_recv;
  // Over ranks: per call, the ranks' times combined by -a; and per-rank averages combined.
  std::vector<double> time_series, bare_series;
  double time_s = 0, time_min_s = 0, time_max_s = 0, bare_time_s = 0;
  double median_s = 0, bare_median_s = 0;  // per-rank medians, combined by -a
  double overhead() const noexcept { return measured_bare ? median_s / bare_median_s - 1 : 0.0; }
  double algbw_GBps = 0, busbw_GBps = 0;
  // Over ranks: the bytes a rank sends (receives) per call, averaged over calls; max and mean.
  double send_bytes_max = 0, send_bytes_mean = 0, recv_bytes_max = 0, recv_bytes_mean = 0;
  std::uint64_t wrong = 0;                  // over all ranks and checked calls
  std::vector<std::string> wrong_examples;  // this rank's, described
};

// --backend nccl: the communicator the calls go through and its bare side (bare_nccl.hpp). The
// case's buffers are then device memory: inputs are made on the host and copied in before the
// timing, a checked call's result copied out; the timing stays on the host clock, each call
// enqueued and its stream synchronized (as nccl-tests' -z 1 waits on its stream).
struct NcclBackend {
  comm::NcclCommunicator* comm = nullptr;
  const BareNccl* bare = nullptr;
};

// Collective over `world`: every rank passes the same spec and settings. `bare` is a duplicate of
// world's MPI communicator (bare MPI calls never share a communicator with the Communicator's; with
// `nccl`, the barriers only). Without `nccl` the calls go through `world`.
CaseResult run_case(comm::MpiCommunicator& world, MPI_Comm bare, const CaseSpec& spec, const RunSettings& settings,
                    const NcclBackend* nccl = nullptr);

}  // namespace embscale::collectives
