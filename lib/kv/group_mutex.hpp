// GroupMutex: the concurrency contract between calls of a dynamic table (HierarchicalKV's
// groups). Three kinds of call:
//   kRead       find, contains, export, dump (one read call: a snapshot), size: any number run
//               together;
//   kUpdate     assign, assign_scores, find_and_update: any number run together (they change
//               rows and scores of present keys in place, under a per-bucket lock, never the
//               set of keys);
//   kExclusive  insert_or_assign, insert_and_evict, find_or_insert, accum_or_assign, restore,
//               erase, erase_if, clear, reserve (rehash), load (one restore): alone.
// Reads and updates never overlap, so a read sees whole rows. Fairness: a waiting exclusive call
// stops new shared calls from entering, and a shared call of the other group waiting stops new
// calls of the running group, so no kind starves.
#pragma once

#include <condition_variable>
#include <mutex>

namespace embscale::kv {

enum class Access { kRead, kUpdate, kExclusive };

class GroupMutex {
 public:
  void lock(Access access);
  void unlock(Access access);
  // Calls of this kind waiting to enter now (diagnostics; tests wait on it instead of sleeping).
  int waiting(Access access) const;

 private:
  bool may_enter(Access access) const noexcept;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int holders_ = 0;  // calls inside now (of active_)
  Access active_ = Access::kRead;
  int waiting_[3] = {0, 0, 0};  // by Access
};

// Holds a GroupMutex for one call (RAII).
class GroupLock {
 public:
  GroupLock(GroupMutex& mutex, Access access) : mutex_(mutex), access_(access) { mutex_.lock(access_); }
  ~GroupLock() { mutex_.unlock(access_); }
  GroupLock(const GroupLock&) = delete;
  GroupLock& operator=(const GroupLock&) = delete;

 private:
  GroupMutex& mutex_;
  Access access_;
};

}  // namespace embscale::kv
