#include "comm/mpi_session.hpp"

#include <mpi.h>

namespace embscale::comm {

MpiSession::MpiSession(int& argc, char**& argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

}  // namespace embscale::comm
