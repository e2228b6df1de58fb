// `embscale collectives --replay SCHEME`: one training step of a scheme, its collectives replayed
// as the engine made them (step_capture.hpp: the calls in order, with this rank's own counts,
// rows and communicators, splits included) twice over on the same buffers: through embscale's
// Communicator and as the bare MPI call that moves the same bytes (step_replay.hpp). What the
// Communicator costs on a real step's exchange, call by call and for the whole step.
//
// Check: before timing, every call runs once each way on a pattern and the bytes received must
// agree (a difference is reported as the case's wrong data, as a collective's data check is).
// Timing: -w untimed iterations, then rounds x -n timed ones; an iteration runs the step's calls
// in order, each once bare and once through embscale, back to back, the side that goes first
// alternating by iteration. Each run's time is the maximum over ranks (an allreduce after it,
// outside the time): the slowest rank sets the pace, and every run starts from ranks that left
// the previous reduction together. With --calibrate both sides run bare MPI: every ratio should
// then be 1, and its spread is the machine's noise floor for the same command.
// Figures, per call and for the step (the sums of its calls per iteration): each side's median
// time, their ratio, and the paired ratio: per iteration embscale / bare, split by which side
// went first (the second run of a pair is systematically faster or slower than the first), the
// geometric mean of the two medians (the crossover design's estimate: the order effect cancels).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/benchmark_run.hpp"
#include "comm/mpi_communicator.hpp"
#include "config/config.hpp"

namespace embscale::collectives {

// The timed runs of one call (or of the step), every rank the same values.
struct ReplayTimes {
  std::vector<double> bare, embscale;  // seconds per run, the maximum over ranks, in run order
  std::vector<bool> bare_first;        // per run: bare MPI went first

  double bare_median() const;
  double embscale_median() const;
  double ratio_of_medians() const;  // embscale / bare
  double paired_ratio() const;      // see the header's comment
};

struct ReplayedCall {
  std::string collective;      // "alltoallv", ... (collective_name)
  std::string type;            // its element type (element_type(...).name; "bytes" for byte rows)
  std::string redop = "none";  // reduce_scatter and allreduce: the operation
  bool in_place = false;
  std::string communicator;     // "layer(4)", "split1(2)": which communicator, and its ranks
  std::uint64_t bytes_max = 0;  // most bytes any rank sends to other ranks in the call
  ReplayTimes times;
};

struct SchemeReplay {
  std::string scheme;               // its report name
  std::string layer;                // the replayed layer's name (the config's first)
  std::vector<ReplayedCall> calls;  // in the step's order
  ReplayTimes step;                 // per run, the sums over the calls
  std::uint64_t step_bytes_max = 0;
  std::string wrong;  // "" or the check's first difference (this rank's, or another rank's verdict)
};

// Captures iteration 0's step of `config`'s first embedding layer (its scheme as the config sets
// it, e.g. with set_layer_scheme) and replays it under `settings` (-n, -w, --rounds, --calibrate).
// Collective over world; every rank passes the same arguments. The capture's own InputErrors (a
// scheme that cannot run the config on these ranks) pass through.
SchemeReplay replay_scheme_step(comm::MpiCommunicator& world, const config::Config& config,
                                const RunSettings& settings);

// The text table of a replay: one line per call and one for the step.
std::string replay_table(const SchemeReplay& replay, const RunSettings& settings, int ranks);

}  // namespace embscale::collectives
