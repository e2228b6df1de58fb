// MessageChannel: tagged point-to-point messages between the ranks of a group, with what a serve
// loop needs and a collective library cannot give: a receive from whichever rank sends first
// (recv_any) and a look at a waiting message (probe, iprobe). The parameter server's protocol
// runs on one (lib/ps). MPI implements it (MpiMessageChannel, over its own duplicate of the
// group's communicator, so its messages never meet the group's); a UCX transport can (tag
// matching, tag probes). Counts, row types, requests and traffic counting as the Communicator's
// (communicator.hpp): bytes_sent are the bytes handed to send, bytes_recv those received.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "comm/communicator.hpp"
#include "comm/remote_window.hpp"

namespace embscale::comm {

// A serve loop's matching (a server answering whichever trainer asks first): any source, any tag.
inline constexpr int kAnySource = -1;
inline constexpr int kAnyTag = -1;
// The tag a channel's own set-up messages use (a window's addresses and keys): not the caller's.
inline constexpr int kWindowTag = 0x7fff'fff0;

// A message found by probe or taken by recv_any: who sent it, with which tag, and how many rows
// of the receiver's row type it holds.
struct MessageInfo {
  int source = -1;
  int tag = -1;
  std::size_t rows = 0;
};

class MessageChannel {
 public:
  virtual ~MessageChannel() = default;

  virtual int rank() const = 0;  // in the group the channel was opened on
  virtual int size() const = 0;
  virtual CommStats& stats() noexcept = 0;
  // The transport and what it selected: "mpi", or "ucx: <UCP's lanes to the next rank>".
  virtual std::string transport_details() const = 0;
  // Opens a window of `bytes` bytes on this rank (its local(), zeroed) for one-sided reads by the
  // group's other ranks (remote_window.hpp); collective over the channel's ranks, each with its
  // own size (possibly 0). The channel's tag kWindowTag is reserved for it. `map`: whether
  // regions on this host are mapped into the readers where the transport can (RemoteWindow::
  // mapped; false: every read through the transport's RMA, as across hosts).
  virtual std::unique_ptr<RemoteWindow> expose(std::size_t bytes, bool map = true) = 0;

  template <class T> void send(std::span<const T> data, int dest, int tag, std::size_t row = 1) {
    check_trivial<T>();
    do_send(data.data(), rows(data.size(), row), row_type_of<T>(row), dest, tag, nullptr);
  }
  template <class T> Request isend(std::span<const T> data, int dest, int tag, std::size_t row = 1) {
    check_trivial<T>();
    Request r;
    do_send(data.data(), rows(data.size(), row), row_type_of<T>(row), dest, tag, &r);
    return r;
  }
  // The receiver posts exactly the sender's count, with its source and tag.
  template <class T> void recv(std::span<T> data, int source, int tag, std::size_t row = 1) {
    check_trivial<T>();
    do_recv(data.data(), rows(data.size(), row), row_type_of<T>(row), source, tag, nullptr);
  }
  template <class T> Request irecv(std::span<T> data, int source, int tag, std::size_t row = 1) {
    check_trivial<T>();
    Request r;
    do_recv(data.data(), rows(data.size(), row), row_type_of<T>(row), source, tag, &r);
    return r;
  }
  // probe: waits until a message from `source` with `tag` (kAnySource, kAnyTag: any) can be
  // received and describes it; the message stays to be received (recv with its source and tag).
  // iprobe: the same without waiting, nullopt when none is there. A message larger than the
  // transport's single-message limit travels in pieces that probe does not see: a serve loop
  // probes small headers and receives payloads by source (as recv does). The rows are counted in
  // `row` values of T; a message that is not a whole number of them is an Error.
  template <class T> MessageInfo probe(int source, int tag, std::size_t row = 1) {
    return *do_probe(source, tag, row_type_of<T>(row), true);
  }
  template <class T> std::optional<MessageInfo> iprobe(int source, int tag, std::size_t row = 1) {
    return do_probe(source, tag, row_type_of<T>(row), false);
  }
  // recv_any: receives the next message from `source` with `tag` (kAnySource, kAnyTag: any) into
  // the front of `data`, which must have room for it (an Error naming both sizes otherwise, the
  // message left unreceived), and says what it was. Single-message sizes only, as probe.
  template <class T> MessageInfo recv_any(std::span<T> data, int source, int tag, std::size_t row = 1) {
    check_trivial<T>();
    return do_recv_any(data.data(), rows(data.size(), row), row_type_of<T>(row), source, tag);
  }

 protected:
  virtual void do_send(const void* data, std::size_t count, RowType type, int dest, int tag, Request* request) = 0;
  virtual void do_recv(void* data, std::size_t count, RowType type, int source, int tag, Request* request) = 0;
  // blocking: waits for a message (never nullopt); else nullopt when none is waiting.
  virtual std::optional<MessageInfo> do_probe(int source, int tag, RowType type, bool blocking) = 0;
  virtual MessageInfo do_recv_any(void* data, std::size_t capacity, RowType type, int source, int tag) = 0;

 private:
  static constexpr std::size_t rows(std::size_t values, std::size_t row) noexcept {
    return row == 1 ? values : values / row;
  }
  template <class T> static constexpr void check_trivial() {
    static_assert(std::is_trivially_copyable_v<T>, "a MessageChannel moves raw bytes: T must be trivially copyable");
  }
};

// The transports a channel runs on (config: parameter_server.transport).
enum class ChannelTransport { kMpi, kUcx };
const char* to_string(ChannelTransport transport) noexcept;  // "mpi", "ucx"

// Opens a channel among the ranks of `group` on `transport`; collective over `group` (every rank
// opens it, in the same order as its other collectives). MPI: an Error when the group is not an
// MPI communicator. UCX: the workers' addresses travel over the group's collectives; an
// InputError on every rank when UCX cannot start on one (UcxMessageChannel).
std::unique_ptr<MessageChannel> open_message_channel(Communicator& group,
                                                     ChannelTransport transport = ChannelTransport::kMpi);

}  // namespace embscale::comm
