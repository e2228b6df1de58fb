// The RemoteWindow over UCX's RMA (private to lib/comm): the region allocated by the channel's UCP
// context (ucp_mem_map with UCP_MEM_MAP_ALLOCATE), its remote key packed and sent with its address
// to every other rank, each peer's key unpacked on the endpoint to that peer; a get is
// ucp_get_nbx, flush waits for each; where UCP can map a peer's region into this process
// (ucp_rkey_ptr: same host, a shared segment), a get copies from it directly instead: the same
// one-sided read without a request's cost per get (measured: about 150 ns each, which a pull of
// 25,000 rows pays 25,000 times). UCP allocates where its transports can read without the
// owner: on one host a shared segment (sysv, posix) that a peer's get copies from directly; across
// hosts memory the NIC has registered for RDMA reads. (Memory UCP did not allocate is read on one
// host through emulated gets that need the owner to progress its worker: measured on UCX 1.13,
// whose only direct transport for it, cma, serves no small gets.) A window does not outlive its
// channel.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "comm/remote_window.hpp"
#include "comm/ucx_worker.hpp"

namespace embscale::comm {

class UcxRemoteWindow final : public RemoteWindow {
 public:
  // Allocates `bytes` (none when 0), zeroed; `stats`: the channel's, where flush() counts the gets.
  // `map`: whether peers' regions are mapped here where UCP can (false: every get a ucp_get_nbx).
  UcxRemoteWindow(detail::UcpWorker& ucp, int rank, std::size_t bytes, CommStats& stats, bool map = true);
  ~UcxRemoteWindow() override;
  UcxRemoteWindow(const UcxRemoteWindow&) = delete;
  UcxRemoteWindow& operator=(const UcxRemoteWindow&) = delete;

  // What a peer needs to read this rank's region: its address and size, then the packed remote
  // key (nothing after the size when the region is empty).
  std::vector<std::uint8_t> descriptor() const;
  // Makes `peer`'s region readable from its descriptor().
  void connect(int peer, std::span<const std::uint8_t> descriptor);

  void get(int target, std::size_t offset, void* into, std::size_t bytes) override;
  void flush() override;
  void publish() override;
  std::span<std::byte> local() override { return region_; }
  const std::byte* mapped(int target) const override {
    return target == rank_ ? region_.data() : peers_.at(static_cast<std::size_t>(target)).mapped;
  }
  std::size_t exposed_bytes(int target) const override { return peers_.at(static_cast<std::size_t>(target)).size; }

 private:
  struct Peer {
    std::uint64_t base = 0;  // the region's address in the peer's memory
    std::size_t size = 0;
    ucp_rkey_h key = nullptr;
    // Where UCP can map the peer's region into this process (ucp_rkey_ptr: a shared segment on
    // the same host), its address here: a get is then a copy, without a UCP request per get.
    const std::byte* mapped = nullptr;
  };
  detail::UcpWorker& ucp_;
  int rank_;
  bool map_;
  std::span<std::byte> region_;
  ucp_mem_h memory_ = nullptr;
  std::vector<std::uint8_t> packed_key_;
  std::vector<Peer> peers_;  // per rank (this rank's own: its region, no key)
  std::vector<ucs_status_ptr_t> pending_;
  CommStats& stats_;
  std::size_t pending_bytes_ = 0;
};

}  // namespace embscale::comm
