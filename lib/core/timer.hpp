// Wall-clock timing of phases. steady_clock: monotonic, unaffected by clock adjustments.
#pragma once

#include <chrono>
#include <string>

namespace embscale {

class Stopwatch {
 public:
  using Clock = std::chrono::steady_clock;
  Stopwatch() noexcept : start_(Clock::now()) {}
  void restart() noexcept { start_ = Clock::now(); }
  double seconds() const noexcept { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  // Seconds since the last lap (or construction) and starts the next lap.
  double lap() noexcept {
    const auto now = Clock::now();
    const double s = std::chrono::duration<double>(now - start_).count();
    start_ = now;
    return s;
  }

 private:
  Clock::time_point start_;
};

// The current UTC time formatted by strftime (e.g. "%Y-%m-%dT%H:%M:%SZ" for ISO 8601).
std::string utc_timestamp(const char* format);

}  // namespace embscale
