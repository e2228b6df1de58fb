// draw_uniforms against each cursor's own next draw, at every SIMD level this CPU runs (run_at's
// three code paths), over several passes of lanes and a partial one.
#include "core/cursor_lanes.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace embscale {
namespace {

TEST(CursorLanes, DrawUniformsIsEachCursorsNextUniform) {
  for (const SimdLevel level : {SimdLevel::kBaseline, SimdLevel::kAvx2, SimdLevel::kAvx512}) {
    if (!cpu_runs(level)) continue;
    for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{255}, std::size_t{1000}}) {
      std::vector<RngCursor> cursors, reference;
      for (std::size_t i = 0; i < count; ++i)
        cursors.emplace_back(CounterRng(i % 3 == 0 ? 7 : 0xffffffffffull + i, i * 0x9e3779b97f4a7c15ull), i << 40);
      reference = cursors;
      std::vector<double> uniforms(count);
      draw_uniforms(cursors, uniforms, level);
      for (std::size_t i = 0; i < count; ++i) {
        ASSERT_EQ(uniforms[i], reference[i].uniform()) << simd_level_name(level) << ", cursor " << i;
        ASSERT_EQ(cursors[i].counter(), reference[i].counter()) << simd_level_name(level) << ", cursor " << i;
      }
    }
  }
}

}  // namespace
}  // namespace embscale
