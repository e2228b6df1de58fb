// DevicePhaseClock: the phase clock of a device step (core/phase_clock.hpp), timed with events on
// the step's stream. mark() records an event after the work queued so far and returns at once;
// durations() waits for the last event and reads the time between consecutive ones. So the
// phases of a GPU step are timed on the GPU, the host never waits inside a step, and the one
// synchronization is StepRecorder::end_step's.
//
// Events are made once and reused: a step with as many phases as the last one creates none.
#pragma once

#include <vector>

#include "core/phase_clock.hpp"
#include "device/device_resources.hpp"

namespace embscale::device {

class DevicePhaseClock final : public PhaseClock {
 public:
  // Marks the work of `context`'s stream (context.memory must be device memory).
  DevicePhaseClock(const DeviceLibrary& library, ExecutionContext context);

  ExecutionContext execution_context() const override { return context_; }
  void start() override;
  void mark() override;
  void durations(std::vector<double>& seconds) override;

 private:
  void record_next();

  DeviceLibrary library_;
  ExecutionContext context_;
  std::vector<Event> events_;  // [0]: the step's start; [k]: the end of phase k
  std::size_t recorded_ = 0;   // events recorded this step
};

}  // namespace embscale::device
