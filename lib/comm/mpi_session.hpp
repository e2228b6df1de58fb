// The MPI library's lifetime in an MPI program (bench/cli's main runs an MPI subcommand inside
// one): MPI_Init_thread at construction, MPI_Finalize at destruction. Only the main thread calls
// MPI (MPI_THREAD_FUNNELED): the host threads of a rank (OpenMP in lib/kv and the pooling) never
// communicate. With the rest of lib/comm, the MPI home of everything above it (DESIGN.md, "Where
// MPI is called").
#pragma once

namespace embscale::comm {

class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  // This process's rank in the world (MPI_COMM_WORLD).
  int world_rank() const noexcept { return world_rank_; }

 private:
  int world_rank_ = 0;
};

}  // namespace embscale::comm
