// How a failure ends a run under MPI, without hangs and without leftovers.
//
// * A failure on some ranks only, anywhere (inside the loop, say): abort_all_ranks prints the
//   failing rank's message, removes this process's temporary files and calls MPI_Abort, which
//   ends every rank. Other ranks may be blocked in a collective; only an abort can free them.
// * A failure in a step that every rank runs deterministically and at the same point (reading
//   the config, opening the report): run_agreed() lets every rank finish the step, agrees by
//   allreduce on whether any failed, has the lowest failing rank print its message once, and
//   makes every rank throw AgreedFailure with that rank's exit code. The program then finalizes
//   MPI and exits normally with that code (2 for bad input), with no abort noise.
#pragma once

#include <functional>
#include <string>

#include "comm/communicator.hpp"

namespace embscale::comm {

struct AgreedFailure {
  int exit_code;
};

// Collective: runs `step` on every rank. When it throws on any rank, every rank throws the
// lowest failing rank's message: as InputError when that rank threw one, else as Error.
// For steps whose failure may be local (a file system check, closing a file), so that no rank
// goes on into a collective call that the failed rank will never make.
void all_or_none(Communicator& comm, const std::function<void()>& step);

// Runs `step` on every rank of `comm`; collective. Throws AgreedFailure on every rank when
// `step` threw embscale::Error (or std::exception) on any rank.
void run_agreed(Communicator& comm, const std::function<void()>& step);

// Collective: the stop signal received by any rank of `comm` (core/stop_request.hpp), the
// highest if several; 0 when none. One allreduce of an int: cheap enough for every iteration
// boundary, and every rank gets the same answer, so all stop together or none does.
int any_rank_stopping(Communicator& comm);

// Prints "embscale: error (rank R of N): message" to stderr, removes registered temporary files
// and ends all ranks of MPI_COMM_WORLD with exit_code. Without MPI initialised it just exits.
[[noreturn]] void abort_all_ranks(int exit_code, const std::string& message);
// Ends every rank of the job with `exit_code` without a message (one was printed already, e.g.
// by a group of ranks that agreed on a failure the others would never hear of): removes this
// process's temporary files and calls MPI_Abort.
[[noreturn]] void end_all_ranks(int exit_code);

}  // namespace embscale::comm
