// Which SIMD code path the vectorized kernels take (the Zipf sampler's batches, for one): the
// widest this CPU runs, or the one named by the environment variable EMBSCALE_SIMD (baseline,
// avx2 or avx512), to compare them or to pin a run to one. The paths compute the same bits; they
// differ in speed only.
//
// The levels are the x86-64 micro-architecture levels: avx2 is x86-64-v3 (AVX2, FMA, BMI2),
// avx512 is x86-64-v4 (AVX-512 F, BW, DQ, VL). Other architectures have the baseline only.
#pragma once

#include <string_view>

// Marks a lambda for run_at: `[&]() EMBSCALE_ALWAYS_INLINE { for (...) ... }`.
#define EMBSCALE_ALWAYS_INLINE __attribute__((always_inline))

namespace embscale {

enum class SimdLevel { kBaseline, kAvx2, kAvx512 };

// Whether this CPU runs `level`'s code.
bool cpu_runs(SimdLevel level) noexcept;

// The level to use: EMBSCALE_SIMD where set, else the widest this CPU runs. Read once. An unknown
// name, or a level this CPU cannot run, is an InputError naming the variable and the choices.
SimdLevel simd_level();

// The level EMBSCALE_SIMD=`named` selects (null or empty: the widest), or that InputError.
SimdLevel simd_level_from(const char* named);

std::string_view simd_level_name(SimdLevel level) noexcept;

namespace detail {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
template <typename Loop> [[gnu::target("arch=x86-64-v4"), gnu::noinline]] void run_avx512(Loop& loop) { loop(); }
template <typename Loop> [[gnu::target("arch=x86-64-v3"), gnu::noinline]] void run_avx2(Loop& loop) { loop(); }
#endif
template <typename Loop> [[gnu::noinline]] void run_baseline(Loop& loop) { loop(); }
}  // namespace detail

// Runs `loop` compiled for `level` (which the CPU must run: cpu_runs): the lambda, marked
// EMBSCALE_ALWAYS_INLINE, is inlined into a function built for that level's instruction set, so
// the compiler vectorizes its loops with those instructions. One source, three code paths; the
// results are the same where the loop uses IEEE operations only (no FMA contraction here).
template <typename Loop> void run_at(SimdLevel level, Loop&& loop) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  if (level == SimdLevel::kAvx512) return detail::run_avx512(loop);
  if (level == SimdLevel::kAvx2) return detail::run_avx2(loop);
#endif
  (void)level;
  detail::run_baseline(loop);
}

}  // namespace embscale
