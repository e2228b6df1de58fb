// Every figure embscale writes improves in its declared direction (report/figure_direction.hpp):
// times, phases and bytes downward; throughput, bandwidth and rates upward.
#include "report/figure_direction.hpp"

#include <gtest/gtest.h>

#include <string>

namespace embscale::report {
namespace {

TEST(FigureDirection, TimesPhasesAndBytesImproveDownward) {
  for (const std::string figure : {"step_time", "phase:route", "phase:exchange_pooled", "phase:emb1.lookup",
                                   "bytes_sent", "mpi_time", "real_time", "cpu_time", "loss"})
    EXPECT_EQ(better_direction(figure), Better::kLower) << figure;
  // A phase is a time whatever its name; a name merely containing a rate's word is not a rate.
  EXPECT_EQ(better_direction("phase:algbw"), Better::kLower);
  EXPECT_EQ(better_direction("exchange_palgbw"), Better::kLower);
}

TEST(FigureDirection, ThroughputBandwidthAndRatesImproveUpward) {
  for (const std::string figure :
       {"throughput_samples_per_s", "throughput_keys_per_s", "exchange_vectors.algbw", "exchange_vectors.busbw",
        "emb1.exchange_pooled.algbw", "reduce_scatter_node.busbw", "items_per_second", "bytes_per_second",
        "emb1.hit_rate", "hit_rate", "auc", "eval_auc"})
    EXPECT_EQ(better_direction(figure), Better::kHigher) << figure;
  EXPECT_TRUE(higher_is_better("exchange_keys.busbw"));
  EXPECT_FALSE(higher_is_better("step_time"));
}

}  // namespace
}  // namespace embscale::report
