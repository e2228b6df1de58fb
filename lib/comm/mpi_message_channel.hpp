// The MessageChannel over MPI: tagged messages on a duplicate of the group's communicator (its
// messages never match the group's own point-to-point traffic), sent and received as
// MpiCommunicator sends and receives (messages beyond its row limit in pieces), probed with
// MPI_Probe / MPI_Iprobe. One thread receives per channel (a probed message is then the one the
// receive takes).
#pragma once

#include <memory>
#include <optional>

#include "comm/message_channel.hpp"
#include "comm/mpi_communicator.hpp"

namespace embscale::comm {

class MpiMessageChannel final : public MessageChannel {
 public:
  // Collective over `group`: duplicates its communicator.
  explicit MpiMessageChannel(const MpiCommunicator& group);

  int rank() const override { return comm_->rank(); }
  int size() const override { return comm_->size(); }
  CommStats& stats() noexcept override { return comm_->stats(); }
  std::string transport_details() const override { return "mpi"; }
  // An MpiRemoteWindow on the channel's communicator.
  std::unique_ptr<RemoteWindow> expose(std::size_t bytes, bool map = true) override;
  // Testing aid: the row limit of the channel's messages (MpiCommunicator::set_max_message_rows).
  void set_max_message_rows(std::size_t rows) { comm_->set_max_message_rows(rows); }

 protected:
  void do_send(const void* data, std::size_t count, RowType type, int dest, int tag, Request* request) override {
    comm_->do_send(data, count, type, dest, tag, request);
  }
  void do_recv(void* data, std::size_t count, RowType type, int source, int tag, Request* request) override {
    comm_->do_recv(data, count, type, source, tag, request);
  }
  std::optional<MessageInfo> do_probe(int source, int tag, RowType type, bool blocking) override {
    return comm_->probe_message(source, tag, type, blocking);
  }
  MessageInfo do_recv_any(void* data, std::size_t capacity, RowType type, int source, int tag) override {
    return comm_->receive_any(data, capacity, type, source, tag);
  }

 private:
  std::unique_ptr<MpiCommunicator> comm_;  // the duplicate, owned
};

}  // namespace embscale::comm
