#include "comm/ucx_remote_window.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include "core/error.hpp"

namespace embscale::comm {
namespace {

constexpr std::size_t kHeaderBytes = 2 * sizeof(std::uint64_t);  // a descriptor's address and size

}  // namespace

UcxRemoteWindow::UcxRemoteWindow(detail::UcpWorker& ucp, int rank, std::size_t bytes, CommStats& stats, bool map)
    : ucp_(ucp), rank_(rank), map_(map), peers_(ucp.endpoints.size()), stats_(stats) {
  if (bytes > 0) {
    ucp_mem_map_params_t params{};
    params.field_mask =
        UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    params.address = nullptr;
    params.length = bytes;
    params.flags = UCP_MEM_MAP_ALLOCATE;
    detail::check(ucp_mem_map(ucp_.context, &params, &memory_),
                  ("ucp_mem_map (allocating " + std::to_string(bytes) + " bytes)").c_str());
    ucp_mem_attr_t attributes{};
    attributes.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
    detail::check(ucp_mem_query(memory_, &attributes), "ucp_mem_query");
    region_ = {static_cast<std::byte*>(attributes.address), bytes};
    std::fill(region_.begin(), region_.end(), std::byte{0});
  }
  peers_.at(static_cast<std::size_t>(rank)) = {reinterpret_cast<std::uint64_t>(region_.data()), bytes, nullptr};
  if (bytes == 0) return;
  void* packed = nullptr;
  std::size_t length = 0;
  detail::check(ucp_rkey_pack(ucp_.context, memory_, &packed, &length), "ucp_rkey_pack");
  const auto* key = static_cast<const std::uint8_t*>(packed);
  packed_key_.assign(key, key + length);
  ucp_rkey_buffer_release(packed);
}

UcxRemoteWindow::~UcxRemoteWindow() {
  for (const ucs_status_ptr_t pending : pending_) {  // gets never flushed (an error path)
    if (pending == nullptr || UCS_PTR_IS_ERR(pending)) continue;
    while (ucp_request_check_status(pending) == UCS_INPROGRESS) ucp_worker_progress(ucp_.worker);
    ucp_request_free(pending);
  }
  for (const Peer& peer : peers_)
    if (peer.key != nullptr) ucp_rkey_destroy(peer.key);
  if (memory_ != nullptr) ucp_mem_unmap(ucp_.context, memory_);
}

std::vector<std::uint8_t> UcxRemoteWindow::descriptor() const {
  std::vector<std::uint8_t> out(kHeaderBytes + packed_key_.size());
  const std::uint64_t header[2] = {reinterpret_cast<std::uint64_t>(region_.data()), region_.size()};
  std::memcpy(out.data(), header, kHeaderBytes);
  std::memcpy(out.data() + kHeaderBytes, packed_key_.data(), packed_key_.size());
  return out;
}

void UcxRemoteWindow::connect(int peer, std::span<const std::uint8_t> descriptor) {
  EMBSCALE_EXPECTS(peer >= 0 && static_cast<std::size_t>(peer) < peers_.size() && peer != rank_,
                   "a window connects to another rank of the group");
  if (descriptor.size() < kHeaderBytes)
    throw Error("ucx window: rank " + std::to_string(peer) + " sent a descriptor of " +
                std::to_string(descriptor.size()) + " bytes, less than its address and size");
  std::uint64_t header[2];
  std::memcpy(header, descriptor.data(), kHeaderBytes);
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  p.base = header[0];
  p.size = header[1];
  if (p.size == 0) return;
  detail::check(
      ucp_ep_rkey_unpack(ucp_.endpoints[static_cast<std::size_t>(peer)], descriptor.data() + kHeaderBytes, &p.key),
      "ucp_ep_rkey_unpack");
  void* mapped = nullptr;
  if (map_ && ucp_rkey_ptr(p.key, p.base, &mapped) == UCS_OK) p.mapped = static_cast<const std::byte*>(mapped);
}

void UcxRemoteWindow::get(int target, std::size_t offset, void* into, std::size_t bytes) {
  EMBSCALE_EXPECTS(target >= 0 && static_cast<std::size_t>(target) < peers_.size(), "a get from a rank of the group");
  const Peer& peer = peers_[static_cast<std::size_t>(target)];
  if (offset > peer.size || bytes > peer.size - offset)
    throw Error("remote window: a get of bytes [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) +
                ") from rank " + std::to_string(target) + ", whose region holds " + std::to_string(peer.size));
  if (bytes == 0) return;
  pending_bytes_ += bytes;
  if (target == rank_) {
    std::memcpy(into, region_.data() + offset, bytes);
    return;
  }
  if (peer.mapped != nullptr) {
    std::memcpy(into, peer.mapped + offset, bytes);
    return;
  }
  ucp_request_param_t param{};
  const ucs_status_ptr_t pending =
      ucp_get_nbx(ucp_.endpoints[static_cast<std::size_t>(target)], into, bytes, peer.base + offset, peer.key, &param);
  if (UCS_PTR_IS_ERR(pending))
    throw Error(std::string("ucx window: ucp_get_nbx from rank ") + std::to_string(target) + ": " +
                ucs_status_string(UCS_PTR_STATUS(pending)));
  if (pending != nullptr) pending_.push_back(pending);
}

void UcxRemoteWindow::flush() {
  // Each get's request in turn; one failure still frees the others (the destructor).
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    const ucs_status_ptr_t pending = pending_[i];
    pending_[i] = nullptr;
    detail::wait_for(ucp_.worker, pending, "get");
  }
  pending_.clear();
  stats_.record("get", 0, pending_bytes_);
  pending_bytes_ = 0;
}

// A peer's get copies this rank's memory directly (no message the owner handles): a fence
// orders the owner's stores before whatever it writes next (the protocol's clock).
void UcxRemoteWindow::publish() { std::atomic_thread_fence(std::memory_order_seq_cst); }

}  // namespace embscale::comm
