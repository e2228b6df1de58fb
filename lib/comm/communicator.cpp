#include "comm/communicator.hpp"

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

}  // namespace embscale::comm
