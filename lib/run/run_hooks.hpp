// The environment hooks of a training run, for the tests of its failure and detection paths (read
// by every driver of a run: the engine's and the parameter server's), and the progress line.
//   EMBSCALE_FAULT_INJECT="RANK:ITERATION" makes that rank throw at the start of that timed
//     iteration, as a real local failure would; "RANK:ITERATION:kill" makes it raise SIGKILL on
//     itself there instead, as the OOM killer or a crashed node would: no handler runs, nothing is
//     cleaned up by that process.
//   EMBSCALE_INJECT_DELAY="PHASE:SECONDS" makes every rank do SECONDS of CPU work more inside each
//     PHASE (a phase the run records, such as update; StepRecorder::inject_delay), to measure
//     compare's detection rate. Unset: no delay.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "embedding/step_recorder.hpp"

namespace embscale::run {

struct InjectedFault {
  int rank = -1;
  std::int64_t iteration = -1;
  bool kill = false;

  void strike_if_due(int this_rank, std::int64_t it) const;
};
// EMBSCALE_FAULT_INJECT's fault (none when unset); InputError naming it when malformed.
InjectedFault injected_fault();

struct InjectedDelay {
  std::string phase;
  double seconds = 0;
};
// EMBSCALE_INJECT_DELAY's delay (0 s when unset); InputError naming it when malformed.
InjectedDelay injected_delay();
// InputError naming EMBSCALE_INJECT_DELAY when the step `recorder` saw has no phase `phase`.
void require_phase(const embedding::StepRecorder& recorder, const std::string& phase);

// "<prefix>iteration 10/100  step 1.234 ms  ...  loss ...  ETA 3.2 s" on `out`.
void print_progress(std::ostream& out, const std::string& prefix, std::int64_t done, std::int64_t total, double step_s,
                    double loss, std::int64_t batch, double elapsed_s);

}  // namespace embscale::run
