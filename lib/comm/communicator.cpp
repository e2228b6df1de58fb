#include "comm/communicator.hpp"

#include <exception>

namespace embscale::comm {

void CommStats::record(const std::string& op, std::uint64_t sent, std::uint64_t recv) {
  auto& s = by_op_[op];
  ++s.calls;
  s.bytes_sent += sent;
  s.bytes_recv += recv;
}

OpStats CommStats::total() const noexcept {
  OpStats t;
  for (const auto& [name, s] : by_op_) {
    t.calls += s.calls;
    t.bytes_sent += s.bytes_sent;
    t.bytes_recv += s.bytes_recv;
  }
  return t;
}

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    if (op_) {
      try { op_->wait(); } catch (...) {}  // never abandon a transfer that still writes memory
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
    try { op_->wait(); } catch (...) {}
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

std::vector<std::string> broadcast_strings(Communicator& comm, std::vector<std::string> texts, int root) {
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
