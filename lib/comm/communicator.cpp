#include "comm/communicator.hpp"

#include <exception>

namespace embscale::comm {

const char* comm_op_name(CommOp op) noexcept {
  switch (op) {
    case CommOp::kBarrier: return "barrier";
    case CommOp::kBcast: return "bcast";
    case CommOp::kAllreduce: return "allreduce";
    case CommOp::kReduceScatter: return "reduce_scatter";
    case CommOp::kGatherv: return "gatherv";
    case CommOp::kAllgatherv: return "allgatherv";
    case CommOp::kAlltoallv: return "alltoallv";
    case CommOp::kAlltoall: return "alltoall";
    case CommOp::kAllgather: return "allgather";
    case CommOp::kReduce: return "reduce";
    case CommOp::kReduceScatterBlock: return "reduce_scatter_block";
    case CommOp::kSendrecv: return "sendrecv";
    case CommOp::kSend: return "send";
    case CommOp::kRecv: return "recv";
    case CommOp::kCount: break;
  }
  return "?";
}

namespace {
void add(OpStats& to, const OpStats& from) noexcept {
  to.calls += from.calls;
  to.bytes_sent += from.bytes_sent;
  to.bytes_recv += from.bytes_recv;
}
}  // namespace

void CommStats::record(const std::string& op, std::uint64_t sent, std::uint64_t recv) {
  add(named_[op], OpStats{1, sent, recv});
}

const std::map<std::string, OpStats>& CommStats::by_op() const {
  by_op_ = named_;
  for (std::size_t i = 0; i < fixed_.size(); ++i)
    if (fixed_[i].calls > 0) add(by_op_[comm_op_name(static_cast<CommOp>(i))], fixed_[i]);
  return by_op_;
}

OpStats CommStats::total() const noexcept {
  OpStats t;
  for (const auto& s : fixed_) add(t, s);
  for (const auto& [name, s] : named_) add(t, s);
  return t;
}

void CommStats::reset() noexcept {
  fixed_ = {};
  named_.clear();
  by_op_.clear();
}

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    if (op_) {
      try {
        op_->wait();
      } catch (...) {}  // never abandon a transfer that still writes memory
    }
    op_ = std::move(other.op_);
  }
  return *this;
}

Request::~Request() {
  // While an exception unwinds, other ranks may never complete this transfer: waiting could
  // block the failing rank before it reaches abort_all_ranks. The abort ends the transfer.
  if (op_ && std::uncaught_exceptions() > 0) {
    op_.release();  // NOLINT: deliberately leaked, MPI may still write into it until the abort
    return;
  }
  if (op_) {
    try {
      op_->wait();
    } catch (...) {}
  }
}

void Request::wait() {
  if (!op_) return;
  auto op = std::move(op_);
  op->wait();
}

bool Request::test() {
  if (!op_) return true;
  if (!op_->test()) return false;
  op_.reset();
  return true;
}

void wait_all(std::span<Request> requests) {
  for (auto& r : requests) r.wait();
}

std::vector<std::string> broadcast_strings(Communicator& device_or_host, std::vector<std::string> texts, int root) {
  Communicator& comm = device_or_host.host_communicator();  // the texts are host memory
  std::vector<std::uint64_t> sizes(texts.size());
  std::string joined;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    sizes[i] = texts[i].size();
    joined += texts[i];
  }
  comm.bcast(std::span<std::uint64_t>(sizes), root);
  std::uint64_t total = 0;
  for (const auto s : sizes) total += s;
  joined.resize(total);
  comm.bcast(std::span<char>(joined), root);
  std::size_t at = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    texts[i] = joined.substr(at, sizes[i]);
    at += sizes[i];
  }
  return texts;
}

}  // namespace embscale::comm
