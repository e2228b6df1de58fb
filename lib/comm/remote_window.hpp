// RemoteWindow: memory every rank of a channel's group exposes, read one-sidedly by the others
// (MPI's passive-target RMA, UCX's RMA gets): a rank reads another's bytes without the owner's CPU
// taking part. What a parameter server's trainers pull static rows through (lib/ps/one_sided_pulls).
//
// Opened collectively (MessageChannel::expose: every rank of the channel, in the same order as the
// channel's other collective calls), each rank with its own region's size (0 where it exposes
// none). The transport allocates the regions (MPI_Win_allocate; UCX: ucp_mem_map's own allocation),
// where its one-sided reads can reach them: on one host UCX reads only memory it allocated in
// shared segments without the owner's CPU (it emulates other gets with messages the owner must
// progress). The owner keeps writing its region (local()) as plain memory; publish() makes what it wrote so far visible
// to the gets that start after. A get of bytes the owner writes meanwhile may see part of the
// write: the owner's protocol says when a region is settled (lib/ps: a clock in its own window).
// Destroyed collectively too (MPI_Win_free), once no rank reads from it any more.
#pragma once

#include <cstddef>
#include <span>

#include "comm/communicator.hpp"

namespace embscale::comm {

class RemoteWindow {
 public:
  virtual ~RemoteWindow() = default;

  // Starts copying `bytes` bytes at `offset` of `target`'s region into `into` (this rank's
  // memory, untouched by the caller until flush()). A range beyond the target's region is an
  // Error. A get from this rank's own region is a copy.
  virtual void get(int target, std::size_t offset, void* into, std::size_t bytes) = 0;
  // Completes every get this rank started on the window; counted in the channel's stats as one
  // "get" with the bytes received.
  virtual void flush() = 0;
  // The owner's side: its writes to its region so far become visible to gets that start after
  // (MPI_Win_sync; a memory fence where the transport reads memory directly).
  virtual void publish() = 0;
  // This rank's region, for the owner to write (empty when it exposed none).
  virtual std::span<std::byte> local() = 0;
  // Where `target`'s region is mapped into this process, when the transport maps it (UCX: a
  // shared segment of a peer on this host), else null. Reads through it are plain loads: a
  // caller reading many scattered pieces can order and prefetch them as it reads its own memory.
  virtual const std::byte* mapped(int target) const {
    (void)target;
    return nullptr;
  }
  // The size of `target`'s region.
  virtual std::size_t exposed_bytes(int target) const = 0;
};

}  // namespace embscale::comm
