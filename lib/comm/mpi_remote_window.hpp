// The RemoteWindow over MPI's passive-target RMA: one MPI_Win_lock_all epoch for the window's life
// (every rank may read any other at any time), MPI_Win_sync to publish.
//   All ranks on one node: MPI_Win_allocate_shared on the channel's communicator, each region's
//     address here from MPI_Win_shared_query (mapped()): a get is a copy, the owner's CPU not in
//     it (the MPI-3 shared-memory window, what MPI offers for "one host, no copy through MPI").
//   Otherwise: MPI_Win_allocate, MPI_Get per get, MPI_Win_flush_all to complete them; which
//     component carries it is OpenMPI's choice (osc rdma over the BTLs, osc ucx, or osc pt2pt,
//     whose gets progress when the owner is in any MPI call: a parameter server waits in
//     MPI_Probe).
#pragma once

#include <mpi.h>

#include <cstddef>
#include <span>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/remote_window.hpp"

namespace embscale::comm {

class MpiRemoteWindow final : public RemoteWindow {
 public:
  // Collective over `comm`. `stats`: the channel's, where flush() counts the gets. `shared`:
  // whether a communicator on one node gets a shared-memory window (false: MPI_Get always, as
  // across nodes; for tests of that path on one host).
  MpiRemoteWindow(MPI_Comm comm, std::size_t bytes, CommStats& stats, bool shared = true);
  ~MpiRemoteWindow() override;  // collective (MPI_Win_free)
  MpiRemoteWindow(const MpiRemoteWindow&) = delete;
  MpiRemoteWindow& operator=(const MpiRemoteWindow&) = delete;

  void get(int target, std::size_t offset, void* into, std::size_t bytes) override;
  void flush() override;
  void publish() override;
  std::span<std::byte> local() override { return local_; }
  const std::byte* mapped(int target) const override { return mapped_.at(static_cast<std::size_t>(target)); }
  std::size_t exposed_bytes(int target) const override { return sizes_.at(static_cast<std::size_t>(target)); }

 private:
  MPI_Win window_ = MPI_WIN_NULL;
  std::span<std::byte> local_;            // MPI's allocation
  std::vector<const std::byte*> mapped_;  // per rank: its region here (a shared window), else null
  std::vector<std::size_t> sizes_;        // per rank: its region's bytes
  CommStats& stats_;
  std::size_t pending_bytes_ = 0;  // started since the last flush
};

}  // namespace embscale::comm
