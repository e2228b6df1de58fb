#include "model/blas.hpp"

#include <cblas.h>

#include <limits>
#include <type_traits>

#include "core/error.hpp"

namespace embscale::model {
namespace {

CBLAS_TRANSPOSE cblas_of(Transpose t) { return t == Transpose::kYes ? CblasTrans : CblasNoTrans; }

// CBLAS takes int (blasint) dimensions: a product beyond them is a caller's error, not a wrap.
blasint dimension(std::int64_t value) {
  EMBSCALE_EXPECTS(value >= 0 && value <= std::numeric_limits<blasint>::max(),
                   "a matrix dimension fits the BLAS's int");
  return static_cast<blasint>(value);
}

// C = beta * C: the product of an empty inner dimension (CBLAS refuses a leading dimension of 0).
template <typename T> void scale(std::int64_t m, std::int64_t n, T beta, T* c, std::int64_t ldc) {
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
}

}  // namespace

template <typename T>
void gemm(Transpose ta, Transpose tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
          std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) return scale(m, n, beta, c, ldc);
  // The one product, CBLAS's sgemm for float and dgemm for double.
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, cblas_of(ta), cblas_of(tb), dimension(m), dimension(n), dimension(k), alpha, a,
                dimension(lda), b, dimension(ldb), beta, c, dimension(ldc));
  else
    cblas_dgemm(CblasRowMajor, cblas_of(ta), cblas_of(tb), dimension(m), dimension(n), dimension(k), alpha, a,
                dimension(lda), b, dimension(ldb), beta, c, dimension(ldc));
}

template void gemm<float>(Transpose, Transpose, std::int64_t, std::int64_t, std::int64_t, float, const float*,
                          std::int64_t, const float*, std::int64_t, float, float*, std::int64_t);
template void gemm<double>(Transpose, Transpose, std::int64_t, std::int64_t, std::int64_t, double, const double*,
                           std::int64_t, const double*, std::int64_t, double, double*, std::int64_t);

void set_blas_threads(int threads) {
  EMBSCALE_EXPECTS(threads >= 1, "the BLAS needs at least one thread");
  openblas_set_num_threads(threads);
}

int blas_threads() { return openblas_get_num_threads(); }

}  // namespace embscale::model
