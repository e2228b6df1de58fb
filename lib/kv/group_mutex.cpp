#include "kv/group_mutex.hpp"

namespace embscale::kv {
namespace {

int index_of(Access a) noexcept { return static_cast<int>(a); }

}  // namespace

bool GroupMutex::may_enter(Access access) const noexcept {
  // Nobody inside: any kind may start, except a shared call while an exclusive one waits. When the
  // last holder leaves, every waiter wakes; without this a reader woken beside the waiting writer
  // could take the empty mutex first and overtake it.
  if (holders_ == 0) return access == Access::kExclusive || waiting_[index_of(Access::kExclusive)] == 0;
  if (access == Access::kExclusive || active_ == Access::kExclusive || active_ != access) return false;
  // Joining the running shared group: not while an exclusive call or the other group waits.
  const Access other = access == Access::kRead ? Access::kUpdate : Access::kRead;
  return waiting_[index_of(Access::kExclusive)] == 0 && waiting_[index_of(other)] == 0;
}

void GroupMutex::lock(Access access) {
  std::unique_lock guard(mutex_);
  ++waiting_[index_of(access)];
  changed_.wait(guard, [&] { return may_enter(access); });
  --waiting_[index_of(access)];
  active_ = access;
  ++holders_;
}

int GroupMutex::waiting(Access access) const {
  std::lock_guard guard(mutex_);
  return waiting_[index_of(access)];
}

void GroupMutex::unlock(Access) {
  {
    std::lock_guard guard(mutex_);
    --holders_;
  }
  changed_.notify_all();
}

}  // namespace embscale::kv
