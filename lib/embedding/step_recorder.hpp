// StepRecorder: what one rank measures of one step, phase by phase. A scheme calls lap(name) at
// the end of each of its phases; the recorder keeps the phase's time (this rank's clock, no
// barrier: waiting for a slower rank shows up in the exchange phases, the imbalance worth
// seeing), the bytes the phase sent and received on the layer's communicators, and the counters
// the scheme reports for the step under its own names.
//
// A step is begin_step() ... lap()s ... end_step(): the phases' seconds are read from the clock
// (core/phase_clock.hpp: the host's steady clock by default, CUDA events for a device step) at
// end_step(), so phases() is read after it.
//
// Phase and counter names are qualified by the layer ("emb1.route") when the run has several
// layers; each phase's meaning comes from the PhaseDefinition of the scheme that recorded it.
#pragma once

#include <time.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/communicator.hpp"
#include "core/phase_clock.hpp"

namespace embscale::embedding {

// A phase a scheme records, and what it covers in a few words (written into the report as
// phase_meanings, so plots and readers can say what a phase is). `collective` names the
// collective the phase runs (nccl-tests' bus-bandwidth factor applies), or is empty.
struct PhaseDefinition {
  const char* name;
  const char* meaning;
  const char* collective = "";
};

// The definition of `phase` among `phases`, or nullptr.
inline const PhaseDefinition* find_phase(std::span<const PhaseDefinition> phases, std::string_view phase) noexcept {
  for (const auto& p : phases)
    if (phase == p.name) return &p;
  return nullptr;
}

struct PhaseRecord {
  std::string name;  // qualified
  const PhaseDefinition* definition;
  double seconds = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_recv = 0;
};

class StepRecorder {
 public:
  // Timed by `clock` (its execution context is the step's).
  explicit StepRecorder(std::unique_ptr<PhaseClock> clock = std::make_unique<HostPhaseClock>());

  const PhaseClock& clock() const noexcept { return *clock_; }
  // Starts a step: forgets the last one and starts the clock of the first phase.
  void begin_step();
  // Ends the step: every phase's seconds read from the clock (a device clock waits for its
  // stream here, once per step).
  void end_step();
  // The phases that follow belong to a layer: `prefix` ("" or "emb1."), its scheme's phase
  // definitions, and the communicators whose traffic its phases count.
  void begin_layer(std::string prefix, std::span<const PhaseDefinition> phases,
                   std::vector<const comm::Communicator*> comms);
  // Ends the current phase under `phase` (one of the layer's definitions) and starts the next.
  void lap(const char* phase);
  // A counter of this step (summed when a layer reports one name twice).
  void count(std::string_view name, std::int64_t value);

  // The last step's phases; their seconds are valid once end_step() has been called.
  const std::vector<PhaseRecord>& phases() const noexcept { return phases_; }
  const std::vector<std::pair<std::string, std::int64_t>>& counters() const noexcept { return counters_; }

  // Test hook (EMBSCALE_INJECT_DELAY): every phase called `phase` (unqualified) does `seconds`
  // more work: a busy loop until this thread has used that much more CPU time, so that, like
  // real extra work, it takes longer in wall time when the rank shares its core.
  void inject_delay(std::string phase, double seconds) {
    delayed_phase_ = std::move(phase);
    delay_s_ = seconds;
  }

 private:
  std::uint64_t traffic(bool sent) const;

  std::unique_ptr<PhaseClock> clock_;
  std::vector<double> seconds_;  // end_step's scratch
  std::string prefix_;
  std::span<const PhaseDefinition> definitions_;
  std::vector<const comm::Communicator*> comms_;
  std::uint64_t sent_mark_ = 0, recv_mark_ = 0;
  std::vector<PhaseRecord> phases_;
  std::vector<std::pair<std::string, std::int64_t>> counters_;
  std::string delayed_phase_;
  double delay_s_ = 0;
};

}  // namespace embscale::embedding
