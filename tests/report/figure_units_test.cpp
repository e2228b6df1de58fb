// Every figure embscale compares is shown in its unit (compare's table, the run summary): exact
// strings for each kind, against values whose display is known by hand.
#include "report/figure_units.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace embscale::report {
namespace {

// (figure, value as stored, what is shown), by hand.
struct Shown {
  const char* figure;
  double value;
  const char* text;
};

TEST(FigureUnits, EachKindOfFigureIsShownInItsUnit) {
  const Shown cases[] = {
      // Times (stored in seconds) in ms: steps, phases, collectives, benchmarks, the run summary's.
      {"step_time", 0.0028314, "2.831 ms"},
      {"phase:exchange_keys", 1.5e-5, "0.015 ms"},
      {"mpi_time", 2e-6, "0.002 ms"},
      {"real_time", 1.25, "1250 ms"},
      {"step_time_median_s", 0.01067, "10.67 ms"},
      {"step_time_p95_s", 0.0175, "17.5 ms"},
      {"dump_stall_s", 0.1685, "168.5 ms"},
      {"checkpoint_s", 0.4969, "496.9 ms"},
      // Bandwidths (bytes/s) in GB/s.
      {"exchange_vectors.algbw", 11.2e9, "11.2 GB/s"},
      {"emb1.exchange_keys.busbw", 3.5e8, "0.35 GB/s"},
      // Counts per second and bytes with SI prefixes.
      {"throughput_samples_per_s", 1452000, "1.452 M samples/s"},
      {"throughput_keys_per_s", 512, "512 keys/s"},
      {"bytes_sent", 3.2e6, "3.2 MB"},
      {"bytes_sent_per_step", 999, "999 B"},
      {"bytes_per_second", 2.5e9, "2.5 GB/s"},
      {"items_per_second", 4.0e3, "4 k items/s"},
      // Rates, ratios and losses have no unit; a figure not measured is not a number.
      {"hit_rate", 0.81234, "0.8123"},
      {"load_imbalance", 1.02, "1.02"},
      {"bytes_imbalance", 1.5, "1.5"},
      {"step_time", std::nan(""), "n/a"},
  };
  for (const auto& c : cases) EXPECT_EQ(format_figure_value(c.figure, c.value), c.text) << c.figure;
  EXPECT_EQ(figure_unit("cpu_time"), "ms");
  EXPECT_EQ(figure_unit("auc"), "");
}

}  // namespace
}  // namespace embscale::report
