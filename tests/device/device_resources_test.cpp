// The device seam's owned handles (lib/device/device_resources.hpp) and the event-timed phase
// clock (lib/device/device_phase_clock.hpp), over the host-compiled fake library, whose streams
// complete at once, whose events hold the host's time at their record and whose device memory is
// host memory: what is checked is the use of the ABI (every handle made, used and ended; copies
// land; durations are the gaps between marks), not a GPU.
#include "device/device_resources.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <numeric>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/timer.hpp"
#include "device/device_phase_clock.hpp"
#include "embedding/step_recorder.hpp"

namespace embscale::device {
namespace {

TEST(DeviceResources, ABufferCopiesToTheDeviceAndBackOnAStream) {
  const DeviceLibrary library = DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE);
  Stream stream(library);
  ASSERT_NE(stream.handle(), nullptr);
  std::vector<std::int32_t> in(1000);
  std::iota(in.begin(), in.end(), -500);
  const auto bytes = static_cast<std::int64_t>(in.size() * sizeof(std::int32_t));
  DeviceBuffer buffer(library, bytes);
  EXPECT_EQ(buffer.bytes(), bytes);
  buffer.copy_from_host(in.data(), bytes, stream.handle());
  std::vector<std::int32_t> out(in.size(), 0);
  buffer.copy_to_host(out.data(), bytes, stream.handle());
  stream.synchronize();
  EXPECT_EQ(out, in);
  EXPECT_THROW(buffer.copy_to_host(out.data(), bytes + 1, stream.handle()), Error);  // past its end
  // A zero-byte buffer is a null pointer and every copy of nothing succeeds.
  DeviceBuffer empty(library, 0);
  EXPECT_EQ(empty.data(), nullptr);
  empty.copy_from_host(in.data(), 0, nullptr);
}

// The stand-in completes work at the call: a recorded event is done at once. Its devices are
// named for it, and one beyond the count is the runtime's error.
TEST(DeviceResources, AnEventSaysWhetherItIsDoneAndDevicesDescribeThemselves) {
  const DeviceLibrary library = DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE);
  Stream stream(library);
  Event event(library);
  event.record(stream.handle());
  EXPECT_TRUE(event.done());
  const auto gpu = library.properties(0);
  EXPECT_EQ(gpu.name, "embscale fake device 0");
  EXPECT_EQ(gpu.compute_major, 9);
  EXPECT_EQ(gpu.memory_bytes, std::int64_t{1} << 30);
  EXPECT_THROW((void)library.properties(1), Error);
}

TEST(DeviceResources, AFailedAllocationIsAnErrorWithTheLibrarysDetail) {
  const DeviceLibrary library = DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE);
  try {
    DeviceBuffer too_big(library, INT64_MAX);
    FAIL() << "an allocation of INT64_MAX bytes succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("allocating 9223372036854775807 bytes of device memory (" + library.path() +
                                         "): CUDA error: cudaMalloc of 9223372036854775807 bytes"),
              std::string::npos)
        << e.what();
  }
}

TEST(DeviceResources, HandlesMoveWithoutBeingDestroyedTwice) {
  const DeviceLibrary library = DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE);
  Event a(library);
  void* const handle = a.handle();
  Event b = std::move(a);
  EXPECT_EQ(b.handle(), handle);
  EXPECT_EQ(a.handle(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  Event c(library);
  c = std::move(b);  // c's own event destroyed, b's taken
  EXPECT_EQ(c.handle(), handle);
  // Timing between two recorded events; an event never recorded is the library's error.
  Event start(library);
  start.record(nullptr);
  c.record(nullptr);
  c.synchronize();
  EXPECT_GE(c.seconds_since(start), 0.0);
  Event never(library);
  EXPECT_THROW((void)never.seconds_since(start), Error);
}

TEST(DevicePhaseClock, RefusesAHostContext) {
  const DeviceLibrary library = DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE);
  EXPECT_THROW(DevicePhaseClock(library, ExecutionContext::host()), Error);
}

// A recorder on the device clock: one duration per lap, each the gap between consecutive marks
// (the fake's events are host timestamps), over two steps that reuse the events.
TEST(DevicePhaseClock, TimesARecordersPhasesBetweenItsEvents) {
  const DeviceLibrary library = DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE);
  Stream stream(library);
  static constexpr embedding::PhaseDefinition kPhases[] = {{"short", "nothing"}, {"long", "a 20 ms sleep"}};
  embedding::StepRecorder recorder(
      std::make_unique<DevicePhaseClock>(library, ExecutionContext::for_device(0, stream.handle())));
  EXPECT_FALSE(recorder.clock().execution_context().on_host());
  for (int step = 0; step < 2; ++step) {
    Stopwatch watch;
    recorder.begin_step();
    recorder.begin_layer("", kPhases, {});
    recorder.lap("short");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    recorder.lap("long");
    recorder.end_step();
    const double wall = watch.seconds();
    ASSERT_EQ(recorder.phases().size(), 2u);
    EXPECT_GE(recorder.phases()[0].seconds, 0.0);
    EXPECT_LT(recorder.phases()[0].seconds, 0.02);
    EXPECT_GE(recorder.phases()[1].seconds, 0.019);  // float milliseconds: a little rounding
    EXPECT_LE(recorder.phases()[0].seconds + recorder.phases()[1].seconds, wall + 1e-3);
  }
}

}  // namespace
}  // namespace embscale::device
