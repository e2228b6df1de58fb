#include "comm/mpi_message_channel.hpp"

#include <mpi.h>

#include "comm/mpi_remote_window.hpp"
#include "comm/ucx_message_channel.hpp"
#include "core/error.hpp"

namespace embscale::comm {

MpiMessageChannel::MpiMessageChannel(const MpiCommunicator& group) {
  MPI_Comm duplicate;
  if (MPI_Comm_dup(group.mpi_comm(), &duplicate) != MPI_SUCCESS) throw Error("message channel: MPI_Comm_dup failed");
  comm_.reset(new MpiCommunicator(duplicate, true));
  comm_->set_max_message_rows(group.max_message_rows());
}

std::unique_ptr<RemoteWindow> MpiMessageChannel::expose(std::size_t bytes, bool map) {
  return std::make_unique<MpiRemoteWindow>(comm_->mpi_comm(), bytes, comm_->stats(), map);
}

const char* to_string(ChannelTransport transport) noexcept {
  return transport == ChannelTransport::kUcx ? "ucx" : "mpi";
}

std::unique_ptr<MessageChannel> open_message_channel(Communicator& group, ChannelTransport transport) {
  if (transport == ChannelTransport::kUcx) return std::make_unique<UcxMessageChannel>(group);
  if (const auto* mpi = dynamic_cast<const MpiCommunicator*>(&group)) return std::make_unique<MpiMessageChannel>(*mpi);
  throw Error("message channel: the group's transport (\"" + group.native_handle().kind +
              "\") has no point-to-point channel; open it on an MPI communicator");
}

}  // namespace embscale::comm
