// What the standalone GPU benchmarks share: BENCH_CHECK ends the program on a CUDA error, naming
// the call (no GoogleTest or libembscale on the GPU machine).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define BENCH_CHECK(call)                                                                                 \
  do {                                                                                                    \
    const cudaError_t bench_err_ = (call);                                                                \
    if (bench_err_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(bench_err_)); \
      std::exit(1);                                                                                       \
    }                                                                                                     \
  } while (false)
