#include "core/cursor_lanes.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace embscale {

void draw_uniforms(std::span<RngCursor> cursors, std::span<double> uniforms, SimdLevel level) {
  EMBSCALE_EXPECTS(cursors.size() == uniforms.size(), "draw_uniforms needs one uniform per cursor");
  CursorLanes lanes;
  for (std::size_t first = 0; first < cursors.size(); first += CursorLanes::kLanes) {
    const std::size_t count = std::min(CursorLanes::kLanes, cursors.size() - first);
    lanes.load(cursors.subspan(first, count));
    double* out = uniforms.data() + first;
    run_at(level, [&]() EMBSCALE_ALWAYS_INLINE {
      for (std::size_t i = 0; i < count; ++i) out[i] = lanes.uniform(i);
    });
    for (std::size_t i = 0; i < count; ++i) {
      RngCursor& cursor = cursors[first + i];
      cursor = RngCursor(cursor.rng(), cursor.counter() + 1);
    }
  }
}

}  // namespace embscale
