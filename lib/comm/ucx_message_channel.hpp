// The MessageChannel over UCX's UCP tag API (libucx, Debian's libucx-dev): one UCP context and
// worker per channel, an endpoint to every other rank of the group, the workers' addresses
// exchanged over the group's own collectives when the channel opens. A message's 64-bit UCP tag
// carries the channel tag (high 32 bits) and the sender's rank in the group (low 32 bits), so a
// receive from a given source, a given tag, or any of either is a tag mask; probe is
// ucp_tag_probe_nb. A blocking call progresses the worker until its request completes (no
// progress thread: one thread uses a channel, as for the MPI one). Messages of any size travel
// whole (UCP's rendezvous protocol takes the large ones), so probe sees every message.
//
// UCP chooses its transports itself (shared memory, TCP, InfiniBand, as UCX_TLS allows);
// transport_details() says which it selected for the channel's endpoints.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "comm/message_channel.hpp"

namespace embscale::comm {
namespace detail {
struct UcpWorker;
}

class UcxMessageChannel final : public MessageChannel {
 public:
  // Collective over `group` (its allgather carries the workers' addresses). An InputError on
  // every rank when UCX cannot start on any of them (comm::all_or_none), naming the lowest such
  // rank, the UCP call and its status (and UCX_TLS when it is set).
  explicit UcxMessageChannel(Communicator& group);
  ~UcxMessageChannel() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  CommStats& stats() noexcept override { return stats_; }
  // "ucx: <the transports and devices UCP selected for the endpoint to the next rank>", then
  // " (UCX_TLS=<value>)" when the environment restricts them.
  std::string transport_details() const override;
  // A UcxRemoteWindow (ucx_remote_window.hpp): the region allocated by ucp_mem_map, its remote key
  // sent to every other rank over the channel (kWindowTag).
  std::unique_ptr<RemoteWindow> expose(std::size_t bytes, bool map = true) override;

 protected:
  void do_send(const void* data, std::size_t count, RowType type, int dest, int tag, Request* request) override;
  void do_recv(void* data, std::size_t count, RowType type, int source, int tag, Request* request) override;
  std::optional<MessageInfo> do_probe(int source, int tag, RowType type, bool blocking) override;
  MessageInfo do_recv_any(void* data, std::size_t capacity, RowType type, int source, int tag) override;

 private:
  // The context, the worker and the endpoints (ucx_worker.hpp: ucp.h stays out of this header).
  std::unique_ptr<detail::UcpWorker> ucp_;
  int rank_ = 0;
  int size_ = 0;
  CommStats stats_;
};

}  // namespace embscale::comm
