// Code that compiles for the host (g++, clang) and for the device (nvcc): the KV table's bucket
// logic (bucket_ref.hpp) is written once and runs in the CPU tests and in the GPU kernels.
// EMBSCALE_HD marks a function both compilers build; under g++ it is empty. Under nvcc it also
// turns off nvcc's check of what a host-and-device function calls, for the one function it marks
// (nv_exec_check_disable, as Thrust does): a template instantiated with the host's tile and
// atomics calls host functions, with the device's device functions, and each instantiation is
// only ever called from its own side.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define EMBSCALE_HD _Pragma("nv_exec_check_disable") __host__ __device__
#else
#define EMBSCALE_HD
#endif

// EMBSCALE_HD for the per-key steps of a batch (batch_ref.hpp): always inlined into the kernel,
// whose parameters then stay in registers (left to itself, nvcc called them for 16-lane tiles with
// a 632-byte stack frame and spills).
#if defined(__CUDACC__)
#define EMBSCALE_HD_INLINE EMBSCALE_HD __forceinline__
#else
#define EMBSCALE_HD_INLINE
#endif

// EMBSCALE_HD for a function template, after its `template <...>` (nvcc takes no pragma there).
#if defined(__CUDACC__)
#define EMBSCALE_HD_T __host__ __device__
#else
#define EMBSCALE_HD_T
#endif

namespace embscale::kv::portable {

// A product and a sum each rounded on its own, never fused into one multiply-add: nvcc contracts
// a * b + c into an FMA by default (the host builds with -ffp-contract=off), which would make a
// device's result differ from the host's in the last bit.
EMBSCALE_HD inline double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
EMBSCALE_HD inline double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

// The same in float (named apart: a mixed double and float call must stay the double one), with
// the division and square root (IEEE-exact on both sides: no fast math), for the embedding step's
// per-row arithmetic (lib/embedding/portable).
EMBSCALE_HD inline float fmul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
EMBSCALE_HD inline float fadd_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
EMBSCALE_HD inline float fsub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
EMBSCALE_HD inline float fdiv_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
EMBSCALE_HD inline float fsqrt_rn(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

}  // namespace embscale::kv::portable
