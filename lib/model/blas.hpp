// The dense layers' matrix products through a BLAS (OpenBLAS's CBLAS, Debian libopenblas-dev),
// row-major, in float or double: C = alpha * op(A) * op(B) + beta * C, with op(A) m x k, op(B)
// k x n and C m x n. Every layer's product goes through gemm, so the dense side's speed is the
// BLAS's (bench/micro/dense_layer_bench.cpp measures it against sgemm alone).
#pragma once

#include <cstdint>

namespace embscale::model {

enum class Transpose { kNo, kYes };

template <typename T>
void gemm(Transpose transpose_a, Transpose transpose_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
          const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc);

// Threads the BLAS uses per call (OpenBLAS's own pool). An MPI run already puts a rank on every
// core, so the run sets the engine's thread count (1 by default); results do not depend on it.
void set_blas_threads(int threads);
int blas_threads();

}  // namespace embscale::model
