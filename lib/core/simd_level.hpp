// Which SIMD code path the vectorized kernels take (the Zipf sampler's batches, for one): the
// widest this CPU runs, or the one named by the environment variable EMBSCALE_SIMD (baseline,
// avx2 or avx512), to compare them or to pin a run to one. The paths compute the same bits; they
// differ in speed only.
//
// The levels are the x86-64 micro-architecture levels: avx2 is x86-64-v3 (AVX2, FMA, BMI2),
// avx512 is x86-64-v4 (AVX-512 F, BW, DQ, VL). Other architectures have the baseline only.
#pragma once

#include <string_view>

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

}  // namespace embscale
