#include "comm/failure.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "core/error.hpp"
#include "core/temp_files.hpp"

namespace embscale::comm {

void run_agreed(Communicator& comm, const std::function<void()>& step) {
  std::string message;
  int exit_code = 0;
  try {
    step();
  } catch (const Error& e) {
    message = e.what();
    exit_code = e.exit_code();
  } catch (const std::exception& e) {
    message = e.what();
    exit_code = kExitFailure;
  }
  const int first_failed = comm.allreduce(exit_code != 0 ? comm.rank() : comm.size(), ReduceOp::kMin);
  if (first_failed == comm.size()) return;
  if (comm.rank() == first_failed) {
    std::fprintf(stderr, "embscale: error: %s\n", message.c_str());
    std::fflush(stderr);
  }
  comm.bcast(std::span<int>(&exit_code, 1), first_failed);
  remove_registered_temp_files();
  throw AgreedFailure{exit_code};
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

}  // namespace embscale::comm
