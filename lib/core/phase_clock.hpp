// PhaseClock: how a step's phases are timed. StepRecorder (embedding/step_recorder.hpp) marks the
// end of each phase on its clock and reads the durations once, when the step ends, so that a
// clock whose marks are asynchronous (CUDA events recorded on a stream, read after the stream
// reaches them: device/device_phase_clock.hpp) times a device step without a second engine and
// without synchronizing at every phase.
//
// HostPhaseClock, the default, reads the steady clock at each mark: no allocation per step once
// its vector has grown, no system call but the clock read.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/execution_context.hpp"
#include "core/timer.hpp"

namespace embscale {

class PhaseClock {
 public:
  virtual ~PhaseClock() = default;

  // Where the marks are taken: a host clock's context is the host's; a device clock marks the
  // work queued on its context's stream.
  virtual ExecutionContext execution_context() const = 0;
  // Starts a step: forgets its marks and starts the first phase.
  virtual void start() = 0;
  // Ends the current phase and starts the next (at the host's now, or after the work queued so
  // far on the device stream).
  virtual void mark() = 0;
  // The seconds of every phase marked since start(), in order (seconds.size() == the marks);
  // a device clock waits here for its stream to reach its last mark.
  virtual void durations(std::vector<double>& seconds) = 0;
};

class HostPhaseClock final : public PhaseClock {
 public:
  ExecutionContext execution_context() const override { return ExecutionContext::host(); }
  void start() override {
    laps_.clear();
    watch_.restart();
  }
  void mark() override { laps_.push_back(watch_.lap()); }
  void durations(std::vector<double>& seconds) override { seconds.assign(laps_.begin(), laps_.end()); }

 private:
  Stopwatch watch_;
  std::vector<double> laps_;
};

}  // namespace embscale
