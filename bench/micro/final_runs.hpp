// The measured runs of a benchmark among all its runs: Google Benchmark first sizes the iteration
// count with shorter runs, then runs every repetition with the final (largest) count. For the
// benchmarks that keep their own (iterations, value) records to summarise after the runs.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace embscale::bench {

// The values of the runs with the largest iteration count, ascending (never empty for a
// non-empty `runs`).
inline std::vector<double> final_runs_sorted(const std::vector<std::pair<benchmark::IterationCount, double>>& runs) {
  benchmark::IterationCount most = 0;
  for (const auto& [iterations, value] : runs) most = std::max(most, iterations);
  std::vector<double> values;
  for (const auto& [iterations, value] : runs)
    if (iterations == most) values.push_back(value);
  std::sort(values.begin(), values.end());
  return values;
}

}  // namespace embscale::bench
