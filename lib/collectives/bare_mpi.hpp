// The bare MPI side of `embscale collectives`: the MPI datatype and op of a call, and running one
// side of a collective (Communicator or bare MPI, blocking or not) under the same timed loop.
// With lib/comm and lib/report, the only place that calls MPI_* (the baseline must be MPI itself).
#pragma once

#include <mpi.h>

#include <chrono>
#include <span>

#include "collectives/collective.hpp"

namespace embscale::collectives {

// A duplicate of a Communicator's MPI communicator for the bare calls (their traffic never
// matches the Communicator's own), freed on destruction. Collective.
class BareCommunicator {
 public:
  explicit BareCommunicator(const comm::Communicator& comm);
  ~BareCommunicator();
  BareCommunicator(const BareCommunicator&) = delete;
  BareCommunicator& operator=(const BareCommunicator&) = delete;
  MPI_Comm get() const noexcept { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// MPI_DATATYPE_NULL for the types MPI has no predefined datatype for (half, bfloat16).
MPI_Datatype bare_datatype(comm::DataType type);
// MPI_OP_NULL for avg (MPI has none).
MPI_Op bare_op(comm::ReduceOp op);
// Throws embscale::Error naming the bare call when rc is not MPI_SUCCESS.
void check_bare(int rc, const char* call);

// Times `call(k)` for k in [first, first + times.size()), the same loop for both sides.
// Back to back (nccl-tests; the default): one clock read per call, times[k] from the end of the
// previous call to the end of this one. With args.barrier_each_call (OSU): a clock read before and
// after each call and an untimed barrier on the bare communicator after it, so that every call
// starts with the ranks aligned.
template <class Call> void timed_calls(const CallArgs& args, std::size_t first, std::span<double> times, Call&& call) {
  using Clock = std::chrono::steady_clock;
  if (args.barrier_each_call) {
    for (std::size_t k = 0; k < times.size(); ++k) {
      const auto start = Clock::now();
      call(first + k);
      times[k] = std::chrono::duration<double>(Clock::now() - start).count();
      check_bare(MPI_Barrier(args.bare), "MPI_Barrier");
    }
    return;
  }
  auto last = Clock::now();
  for (std::size_t k = 0; k < times.size(); ++k) {
    call(first + k);
    const auto now = Clock::now();
    times[k] = std::chrono::duration<double>(now - last).count();
    last = now;
  }
}

// Runs one side of a collective for calls [first, first + times.size()):
//   embscale, blocking:      blocking(k)              (a Communicator call)
//   embscale, non-blocking:  immediate(k).wait()      (a Communicator i-call returning a Request)
//   bare, blocking:          check_bare(bare(k))      (an MPI call returning its rc)
//   bare, non-blocking:      bare_immediate(k, requests), then MPI_Waitall of both requests
//                            (the second stays MPI_REQUEST_NULL but for a send/receive pair)
template <class Blocking, class Immediate, class Bare, class BareImmediate>
void run_side(Side side, const CallArgs& args, std::size_t first, std::span<double> times, const char* bare_name,
              Blocking&& blocking, Immediate&& immediate, Bare&& bare, BareImmediate&& bare_immediate) {
  if (side == Side::kEmbscale) {
    if (args.blocking) timed_calls(args, first, times, blocking);
    else timed_calls(args, first, times, [&](std::size_t k) { immediate(k).wait(); });
  } else if (args.blocking) {
    timed_calls(args, first, times, [&](std::size_t k) { check_bare(bare(k), bare_name); });
  } else {
    timed_calls(args, first, times, [&](std::size_t k) {
      MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
      check_bare(bare_immediate(k, requests), bare_name);
      check_bare(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE), "MPI_Waitall");
    });
  }
}

}  // namespace embscale::collectives
