// Per-rank phase timing of one step. Each rank times its own phases with no barrier: waiting
// for a slower rank shows up in the exchange phases, which is the imbalance worth seeing.
#pragma once

#include <time.h>

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/timer.hpp"

namespace embscale::embedding {

// A phase a scheme records, and what it covers, in a few words: written into the report beside
// the timings (attribute phase_meanings) so that plots and readers can say what a phase is.
struct PhaseDefinition {
  const char* name;
  const char* meaning;
};

// The meaning of `phase` among `phases`, or nullptr when it is not one of them.
inline const char* meaning_of(std::span<const PhaseDefinition> phases, std::string_view phase) noexcept {
  for (const auto& p : phases)
    if (phase == p.name) return p.meaning;
  return nullptr;
}

class PhaseClock {
 public:
  // Starts the clock of the first phase.
  void start() { watch_.restart(); }
  // Ends the current phase under `name` and starts the next one.
  void lap(const char* name) {
    if (delay_s_ > 0 && delayed_phase_ == name) spin_for(delay_s_);
    phases_.emplace_back(name, watch_.lap());
  }

  const std::vector<std::pair<std::string, double>>& phases() const noexcept { return phases_; }
  void clear() { phases_.clear(); }

  // Test hook (EMBSCALE_INJECT_DELAY): every phase called `phase` does `seconds` more work, so
  // that compare's detection rate can be measured against a slowdown of known size. The work is
  // a busy loop until this thread has used `seconds` more CPU time: like real extra work, it
  // takes longer in wall time when the rank shares its core (a wall-clock spin would not).
  void inject_delay(std::string phase, double seconds) {
    delayed_phase_ = std::move(phase);
    delay_s_ = seconds;
  }

 private:
  static double thread_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  }
  static void spin_for(double seconds) {
    const double until = thread_cpu_seconds() + seconds;
    while (thread_cpu_seconds() < until) {
    }
  }

  Stopwatch watch_;
  std::vector<std::pair<std::string, double>> phases_;
  std::string delayed_phase_;
  double delay_s_ = 0;
};

}  // namespace embscale::embedding
