#include "comm/ucx_message_channel.hpp"

#include <sched.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "comm/failure.hpp"
#include "comm/ucx_remote_window.hpp"
#include "comm/ucx_worker.hpp"
#include "core/error.hpp"

namespace embscale::comm {
namespace detail {

UcpWorker::~UcpWorker() {
  if (worker != nullptr) {
    // Every message the protocol sent was received before a channel closes (the run's last
    // collective follows the last receive), so the endpoints close without a flush.
    for (ucp_ep_h& ep : endpoints) {
      if (ep == nullptr) continue;
      ucp_request_param_t param{};
      param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      param.flags = UCP_EP_CLOSE_FLAG_FORCE;
      const ucs_status_ptr_t pending = ucp_ep_close_nbx(ep, &param);
      if (pending != nullptr && !UCS_PTR_IS_ERR(pending)) {
        while (ucp_request_check_status(pending) == UCS_INPROGRESS) ucp_worker_progress(worker);
        ucp_request_free(pending);
      }
      ep = nullptr;
    }
    ucp_worker_destroy(worker);
  }
  if (context != nullptr) ucp_cleanup(context);
}

namespace {

std::string status_text(ucs_status_t status) { return ucs_status_string(status); }

}  // namespace

// One round of progress; when nothing progressed, the core goes to another process (as OpenMPI
// with mpi_yield_when_idle): a rank waiting for a peer that shares its core lets the peer run.
void progress(ucp_worker_h worker) {
  if (ucp_worker_progress(worker) == 0) sched_yield();
}

// Waits for a UCP operation: nullptr is done at once, an error pointer failed, anything else is
// a request to progress the worker for and then free.
void wait_for(ucp_worker_h worker, ucs_status_ptr_t pending, const char* what) {
  if (pending == nullptr) return;
  if (UCS_PTR_IS_ERR(pending))
    throw Error(std::string("ucx channel: ") + what + ": " + status_text(UCS_PTR_STATUS(pending)));
  ucs_status_t status;
  while ((status = ucp_request_check_status(pending)) == UCS_INPROGRESS) progress(worker);
  ucp_request_free(pending);
  if (status != UCS_OK) throw Error(std::string("ucx channel: ") + what + ": " + status_text(status));
}

void check(ucs_status_t status, const char* call) {
  if (status != UCS_OK) throw Error(std::string(call) + ": " + status_text(status));
}

}  // namespace detail

using detail::check;
using detail::progress;
using detail::wait_for;

namespace {

// The UCP tag of a message: the channel tag in the high half, the sender's rank in the low half.
constexpr int kTagShift = 32;
constexpr ucp_tag_t kSourceBits = 0xffffffffULL;
constexpr ucp_tag_t kTagBits = kSourceBits << kTagShift;

ucp_tag_t ucp_tag_of(int tag, int source) {
  return (static_cast<ucp_tag_t>(static_cast<std::uint32_t>(tag)) << kTagShift) |
         static_cast<ucp_tag_t>(static_cast<std::uint32_t>(source));
}
ucp_tag_t mask_of(int tag, int source) {
  return (tag == kAnyTag ? 0 : kTagBits) | (source == kAnySource ? 0 : kSourceBits);
}
int source_of(ucp_tag_t tag) { return static_cast<int>(tag & kSourceBits); }
int channel_tag_of(ucp_tag_t tag) { return static_cast<int>(tag >> kTagShift); }

// A non-blocking send or receive in flight: completes by progressing the channel's worker.
class UcxPending final : public PendingOperation {
 public:
  UcxPending(ucp_worker_h worker, ucs_status_ptr_t pending, const char* what)
      : worker_(worker), pending_(pending), what_(what) {}
  ~UcxPending() override {
    if (pending_ == nullptr) return;
    try {
      wait();
    } catch (...) {  // a destructor must not throw; the failure was the caller's to see in wait()
    }
  }
  void wait() override {
    const ucs_status_ptr_t pending = pending_;
    pending_ = nullptr;
    wait_for(worker_, pending, what_);
  }
  bool test() override {
    if (pending_ == nullptr) return true;
    ucp_worker_progress(worker_);
    if (ucp_request_check_status(pending_) == UCS_INPROGRESS) return false;
    wait();
    return true;
  }

 private:
  ucp_worker_h worker_;
  ucs_status_ptr_t pending_;
  const char* what_;
};

}  // namespace

UcxMessageChannel::UcxMessageChannel(Communicator& group)
    : ucp_(std::make_unique<detail::UcpWorker>()), rank_(group.rank()), size_(group.size()) {
  std::vector<std::uint8_t> address;
  // Agreed: a rank whose UCX cannot start fails every rank with its message (the lowest such
  // rank's), as bad input: the environment (UCX_TLS, devices) is the user's to fix.
  all_or_none(group, [&] {
    try {
      ucp_config_t* config = nullptr;
      check(ucp_config_read(nullptr, nullptr, &config), "ucp_config_read");
      ucp_params_t params{};
      params.field_mask = UCP_PARAM_FIELD_FEATURES;
      params.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA;  // messages, and windows' gets
      const ucs_status_t init = ucp_init(&params, config, &ucp_->context);
      ucp_config_release(config);
      check(init, "ucp_init");
      ucp_worker_params_t worker_params{};
      worker_params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
      worker_params.thread_mode = UCS_THREAD_MODE_SINGLE;
      check(ucp_worker_create(ucp_->context, &worker_params, &ucp_->worker), "ucp_worker_create");
      ucp_address_t* own = nullptr;
      std::size_t length = 0;
      check(ucp_worker_get_address(ucp_->worker, &own, &length), "ucp_worker_get_address");
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(own);
      address.assign(bytes, bytes + length);
      ucp_worker_release_address(ucp_->worker, own);
    } catch (const Error& e) {
      const char* tls = std::getenv("UCX_TLS");
      throw InputError("parameter_server.transport \"ucx\": UCX could not start on rank " + std::to_string(rank_) +
                       ": " + e.what() + (tls ? std::string(" (UCX_TLS=") + tls + ")" : std::string()));
    }
  });

  // Every worker's address, then an endpoint to every other rank.
  const auto lengths = group.allgather(address.size());
  const std::size_t total = std::accumulate(lengths.begin(), lengths.end(), std::size_t{0});
  std::vector<std::uint8_t> all(total);
  group.allgatherv(std::span<const std::uint8_t>(address), std::span<std::uint8_t>(all),
                   std::span<const std::size_t>(lengths));
  ucp_->endpoints.assign(static_cast<std::size_t>(size_), nullptr);
  std::size_t offset = 0;
  for (int r = 0; r < size_; ++r) {
    const std::size_t at = offset;
    offset += lengths[static_cast<std::size_t>(r)];
    if (r == rank_) continue;
    ucp_ep_params_t ep_params{};
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_params.address = reinterpret_cast<const ucp_address_t*>(all.data() + at);
    check(ucp_ep_create(ucp_->worker, &ep_params, &ucp_->endpoints[static_cast<std::size_t>(r)]), "ucp_ep_create");
  }
}

UcxMessageChannel::~UcxMessageChannel() = default;

std::string UcxMessageChannel::transport_details() const {
  const int peer = (rank_ + 1) % size_;
  if (peer == rank_) return "ucx (one rank: no endpoint)";
  char* text = nullptr;
  std::size_t length = 0;
  FILE* stream = open_memstream(&text, &length);
  if (stream == nullptr) return "ucx";
  ucp_ep_print_info(ucp_->endpoints[static_cast<std::size_t>(peer)], stream);
  std::fclose(stream);
  const std::string info(text, length);
  std::free(text);
  // The lanes' lines name each transport and device ("lane[0]: 3:posix/memory.0 ..."); keep
  // them, one per lane, in the order UCP printed them.
  std::istringstream lines(info);
  std::string line, lanes;
  while (std::getline(lines, line)) {
    const auto at = line.find("lane[");
    if (at == std::string::npos) continue;
    std::string lane = line.substr(at);
    while (!lane.empty() && (lane.back() == ' ' || lane.back() == '\r')) lane.pop_back();
    lanes += (lanes.empty() ? "" : "; ") + lane;
  }
  // What the user asked UCP for, beside what it chose.
  const char* tls = std::getenv("UCX_TLS");
  return "ucx: " + (lanes.empty() ? std::string("(no lane reported)") : lanes) +
         (tls ? std::string(" (UCX_TLS=") + tls + ")" : std::string());
}

void UcxMessageChannel::do_send(const void* data, std::size_t count, RowType type, int dest, int tag,
                                Request* request) {
  EMBSCALE_EXPECTS(dest >= 0 && dest < size_ && dest != rank_ && tag >= 0, "a send to another rank, tag >= 0");
  const std::size_t bytes = count * type.row_bytes;
  ucp_request_param_t param{};
  const ucs_status_ptr_t pending =
      ucp_tag_send_nbx(ucp_->endpoints[static_cast<std::size_t>(dest)], data, bytes, ucp_tag_of(tag, rank_), &param);
  stats_.record(CommOp::kSend, bytes, 0);
  if (request) *request = Request(std::make_unique<UcxPending>(ucp_->worker, pending, "send"));
  else wait_for(ucp_->worker, pending, "send");
}

void UcxMessageChannel::do_recv(void* data, std::size_t count, RowType type, int source, int tag, Request* request) {
  EMBSCALE_EXPECTS(source >= 0 && source < size_ && tag >= 0, "a receive names its source and tag");
  const std::size_t bytes = count * type.row_bytes;
  ucp_request_param_t param{};
  const ucs_status_ptr_t pending =
      ucp_tag_recv_nbx(ucp_->worker, data, bytes, ucp_tag_of(tag, source), mask_of(tag, source), &param);
  stats_.record(CommOp::kRecv, 0, bytes);
  if (request) *request = Request(std::make_unique<UcxPending>(ucp_->worker, pending, "receive"));
  else wait_for(ucp_->worker, pending, "receive");
}

std::optional<MessageInfo> UcxMessageChannel::do_probe(int source, int tag, RowType type, bool blocking) {
  const ucp_tag_t wanted = ucp_tag_of(tag == kAnyTag ? 0 : tag, source == kAnySource ? 0 : source);
  ucp_tag_recv_info_t info{};
  const auto found = [&] { return ucp_tag_probe_nb(ucp_->worker, wanted, mask_of(tag, source), 0, &info) != nullptr; };
  if (blocking) {
    while (!found()) progress(ucp_->worker);
  } else if (!found()) {
    ucp_worker_progress(ucp_->worker);
    if (!found()) return std::nullopt;
  }
  if (info.length % type.row_bytes != 0)
    throw Error("probe: the message from rank " + std::to_string(source_of(info.sender_tag)) + " (tag " +
                std::to_string(channel_tag_of(info.sender_tag)) + ") holds " + std::to_string(info.length) +
                " bytes, not a whole number of rows of " + std::to_string(type.row_bytes) + " bytes");
  return MessageInfo{source_of(info.sender_tag), channel_tag_of(info.sender_tag), info.length / type.row_bytes};
}

MessageInfo UcxMessageChannel::do_recv_any(void* data, std::size_t capacity, RowType type, int source, int tag) {
  const MessageInfo found = *do_probe(source, tag, type, true);
  if (found.rows > capacity)
    throw Error("recv_any: the message from rank " + std::to_string(found.source) + " (tag " +
                std::to_string(found.tag) + ") holds " + std::to_string(found.rows) + " rows, the buffer room for " +
                std::to_string(capacity));
  // The first message of that source and tag is the one probed (UCP matches in order per sender).
  do_recv(data, found.rows, type, found.source, found.tag, nullptr);
  return found;
}

std::unique_ptr<RemoteWindow> UcxMessageChannel::expose(std::size_t bytes, bool map) {
  auto window = std::make_unique<UcxRemoteWindow>(*ucp_, rank_, bytes, stats_, map);
  // Every rank's descriptor to every other rank over the channel itself (one tag: UCP matches a
  // sender's messages in order, so windows opened one after another do not mix).
  const std::vector<std::uint8_t> own = window->descriptor();
  std::vector<Request> sends;
  for (int r = 0; r < size_; ++r)
    if (r != rank_) sends.push_back(isend(std::span<const std::uint8_t>(own), r, kWindowTag));
  std::vector<std::uint8_t> theirs;
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    theirs.resize(probe<std::uint8_t>(r, kWindowTag).rows);
    recv(std::span<std::uint8_t>(theirs), r, kWindowTag);
    window->connect(r, theirs);
  }
  wait_all(sends);
  return window;
}

}  // namespace embscale::comm
