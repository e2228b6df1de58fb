// GroupMutex: which kinds of call may be inside together. A second thread tries to enter while
// the main thread holds the mutex; it must get in (same shared group) or wait until the main
// thread leaves (other group, exclusive). Waits are bounded so a broken mutex fails, not hangs.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "kv/group_mutex.hpp"

namespace embscale::kv {
namespace {

using namespace std::chrono_literals;

bool becomes_true(const std::atomic<bool>& flag, std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Whether a call of kind `access` is waiting on `mutex` within the time given.
bool becomes_waiting(const GroupMutex& mutex, Access access, std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (mutex.waiting(access) == 0) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Holds `held`, starts a thread that locks `wanted`, and says whether it got in within `wait`
// while `held` was still held. Then releases and checks the thread always gets in eventually.
bool enters_while_held(Access held, Access wanted, std::chrono::milliseconds wait) {
  GroupMutex mutex;
  mutex.lock(held);
  std::atomic<bool> entered = false;
  std::thread other([&] {
    const GroupLock lock(mutex, wanted);
    entered = true;
  });
  const bool got_in = becomes_true(entered, wait);
  mutex.unlock(held);
  EXPECT_TRUE(becomes_true(entered, 5000ms)) << "the waiting call never entered";
  other.join();
  return got_in;
}

TEST(GroupMutex, SharedGroupsAdmitTheirOwnKind) {
  EXPECT_TRUE(enters_while_held(Access::kRead, Access::kRead, 10000ms));
  EXPECT_TRUE(enters_while_held(Access::kUpdate, Access::kUpdate, 10000ms));
}

TEST(GroupMutex, ReadsUpdatesAndExclusiveCallsExcludeEachOther) {
  // The other thread is given 0.3 s to enter wrongly (a broken mutex lets it in at once).
  EXPECT_FALSE(enters_while_held(Access::kRead, Access::kUpdate, 300ms));
  EXPECT_FALSE(enters_while_held(Access::kUpdate, Access::kRead, 300ms));
  EXPECT_FALSE(enters_while_held(Access::kUpdate, Access::kExclusive, 300ms));
  EXPECT_FALSE(enters_while_held(Access::kExclusive, Access::kRead, 300ms));
}

TEST(GroupMutex, AWaitingExclusiveCallStopsNewReaders) {
  GroupMutex mutex;
  mutex.lock(Access::kRead);
  std::atomic<bool> writer_in = false, late_reader_in = false;
  std::thread writer([&] {
    const GroupLock lock(mutex, Access::kExclusive);
    writer_in = true;
    EXPECT_FALSE(late_reader_in.load()) << "a reader entered while the exclusive call was inside";
  });
  ASSERT_TRUE(becomes_waiting(mutex, Access::kExclusive, 10000ms)) << "the writer never waited";
  std::thread late_reader([&] {
    const GroupLock lock(mutex, Access::kRead);
    late_reader_in = true;
  });
  ASSERT_TRUE(becomes_waiting(mutex, Access::kRead, 10000ms)) << "the late reader neither waited nor entered";
  std::this_thread::sleep_for(50ms);  // a broken mutex would let the waiting reader in by now
  EXPECT_FALSE(late_reader_in.load()) << "a new reader overtook the waiting exclusive call";
  mutex.unlock(Access::kRead);
  writer.join();
  late_reader.join();
  EXPECT_TRUE(writer_in.load());
  EXPECT_TRUE(late_reader_in.load());
}

}  // namespace
}  // namespace embscale::kv
