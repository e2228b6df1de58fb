#include "core/simd_level.hpp"

#include <cstdlib>
#include <string>

#include "core/error.hpp"

namespace embscale {
namespace {

constexpr SimdLevel kLevels[] = {SimdLevel::kBaseline, SimdLevel::kAvx2, SimdLevel::kAvx512};

SimdLevel widest_level() noexcept {
  if (cpu_runs(SimdLevel::kAvx512)) return SimdLevel::kAvx512;
  if (cpu_runs(SimdLevel::kAvx2)) return SimdLevel::kAvx2;
  return SimdLevel::kBaseline;
}

}  // namespace

SimdLevel simd_level_from(const char* named) {
  if (named == nullptr || *named == '\0') return widest_level();
  for (const SimdLevel level : kLevels) {
    if (simd_level_name(level) != named) continue;
    if (!cpu_runs(level))
      throw InputError("EMBSCALE_SIMD=" + std::string(named) +
                       ": this CPU cannot run that level (the widest it runs is " +
                       std::string(simd_level_name(widest_level())) + ")");
    return level;
  }
  throw InputError("EMBSCALE_SIMD=" + std::string(named) + ": expected baseline, avx2 or avx512");
}

bool cpu_runs(SimdLevel level) noexcept {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  switch (level) {
    case SimdLevel::kBaseline: return true;
    case SimdLevel::kAvx2: return __builtin_cpu_supports("x86-64-v3");
    case SimdLevel::kAvx512: return __builtin_cpu_supports("x86-64-v4");
  }
  return false;
#else
  return level == SimdLevel::kBaseline;
#endif
}

SimdLevel simd_level() {
  static const SimdLevel level = simd_level_from(std::getenv("EMBSCALE_SIMD"));
  return level;
}

std::string_view simd_level_name(SimdLevel level) noexcept {
  switch (level) {
    case SimdLevel::kBaseline: return "baseline";
    case SimdLevel::kAvx2: return "avx2";
    case SimdLevel::kAvx512: return "avx512";
  }
  return "baseline";
}

}  // namespace embscale
