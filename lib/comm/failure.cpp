#include "comm/failure.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "core/error.hpp"
#include "core/stop_request.hpp"
#include "core/temp_files.hpp"

namespace embscale::comm {

void all_or_none(Communicator& comm, const std::function<void()>& step) {
  std::string message;
  bool input_error = false;
  bool failed = false;
  try {
    step();
  } catch (const InputError& e) {
    failed = input_error = true;
    message = e.what();
  } catch (const std::exception& e) {
    failed = true;
    message = e.what();
  } catch (...) {  // whatever it was, the other ranks must still hear of it
    failed = true;
    message = "unknown exception";
  }
  const int first = comm.allreduce(failed ? comm.rank() : comm.size(), ReduceOp::kMin);
  if (first == comm.size()) return;
  auto texts = broadcast_strings(comm, {message, input_error ? "input" : "error"}, first);
  if (texts[1] == "input") throw InputError(texts[0]);
  throw Error(texts[0]);
}

int any_rank_stopping(Communicator& comm) { return comm.allreduce(stop_signal(), ReduceOp::kMax); }

void run_agreed(Communicator& comm, const std::function<void()>& step) {
  try {
    all_or_none(comm, step);
  } catch (const Error& e) {  // the same error on every rank: say it once
    if (comm.rank() == 0) {
      std::fprintf(stderr, "embscale: error: %s\n", e.what());
      std::fflush(stderr);
    }
    remove_registered_temp_files();
    throw AgreedFailure{e.exit_code()};
  }
}

void abort_all_ranks(int exit_code, const std::string& message) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  int rank = 0, size = 1;
  const bool mpi_up = initialized && !finalized;
  if (mpi_up) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
  std::fprintf(stderr, "embscale: error (rank %d of %d): %s\n", rank, size, message.c_str());
  std::fflush(stderr);
  remove_registered_temp_files();
  if (mpi_up) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

void end_all_ranks(int exit_code) {
  remove_registered_temp_files();
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

}  // namespace embscale::comm
