// Stopping early on request: SIGTERM or SIGUSR1, what Slurm sends before a time limit
// (`--signal=B:USR1@120`, forwarded by the batch script), a preemption or a requeue.
//
// The handler only records the signal (async-signal-safe). Loops check stop_requested() at safe
// points: at iteration boundaries, outside the timed region. Under MPI the ranks must agree
// before acting on it (comm::any_rank_stopping): a rank that stopped alone would leave the
// others blocked in the next collective.
#pragma once

#include <string>

#include "core/error.hpp"

namespace embscale {

// The exit code of a program that stopped cleanly on request: distinct from success (0),
// failure (1) and bad input (2), so that a job script can tell "resume me" from "broken".
inline constexpr int kExitStopped = 3;

// Thrown on every rank once the ranks agreed to stop; main() turns it into kExitStopped.
class StopRequested : public Error {
 public:
  using Error::Error;
  int exit_code() const noexcept override { return kExitStopped; }
};

// Installs the handlers for SIGTERM and SIGUSR1 (idempotent).
void install_stop_signal_handlers();

// The signal that asked this process to stop, or 0.
int stop_signal() noexcept;
inline bool stop_requested() noexcept { return stop_signal() != 0; }

// "SIGTERM", "SIGUSR1", ... for messages.
std::string signal_name(int signal);

// For tests: as if `signal` had arrived; 0 clears the request.
void set_stop_signal_for_testing(int signal) noexcept;

}  // namespace embscale
