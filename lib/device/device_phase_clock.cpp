#include "device/device_phase_clock.hpp"

#include "core/error.hpp"

namespace embscale::device {

DevicePhaseClock::DevicePhaseClock(const DeviceLibrary& library, ExecutionContext context)
    : library_(library), context_(context) {
  if (context_.on_host())
    throw Error("a device phase clock needs a device context (its events are recorded on a stream)");
}

void DevicePhaseClock::record_next() {
  if (recorded_ == events_.size()) events_.emplace_back(library_);
  events_[recorded_++].record(context_.stream);
}

void DevicePhaseClock::start() {
  recorded_ = 0;
  record_next();
}

void DevicePhaseClock::mark() {
  EMBSCALE_EXPECTS(recorded_ > 0, "a phase is marked after start()");
  record_next();
}

void DevicePhaseClock::durations(std::vector<double>& seconds) {
  seconds.clear();
  if (recorded_ < 2) return;
  events_[recorded_ - 1].synchronize();  // the stream's work is in order: every earlier event is done too
  for (std::size_t k = 1; k < recorded_; ++k) seconds.push_back(events_[k].seconds_since(events_[k - 1]));
}

}  // namespace embscale::device
