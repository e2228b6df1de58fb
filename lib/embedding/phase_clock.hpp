// Per-rank phase timing of one step. Each rank times its own phases with no barrier: waiting
// for a slower rank shows up in the exchange phases, which is the imbalance worth seeing.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/timer.hpp"

namespace embscale::embedding {

class PhaseClock {
 public:
  // Starts the clock of the first phase.
  void start() { watch_.restart(); }
  // Ends the current phase under `name` and starts the next one.
  void lap(const char* name) { phases_.emplace_back(name, watch_.lap()); }

  const std::vector<std::pair<std::string, double>>& phases() const noexcept { return phases_; }
  void clear() { phases_.clear(); }

 private:
  Stopwatch watch_;
  std::vector<std::pair<std::string, double>> phases_;
};

}  // namespace embscale::embedding
