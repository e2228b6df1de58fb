#include "embedding/cuda_backend.hpp"

#include "core/error.hpp"

namespace embscale::embedding {

void CudaBackend::gather_rows_host(std::span<const float> table, std::size_t dim,
                                   std::span<const std::int64_t> rows, std::span<float> out) const {
  EMBSCALE_EXPECTS(dim > 0, "rows need at least one column");
  EMBSCALE_EXPECTS(table.size() % dim == 0, "the table holds whole rows of dim floats");
  EMBSCALE_EXPECTS(out.size() == rows.size() * dim, "out holds one row of dim floats per index");
  library_.check(library_.functions().gather_rows_host(
                     table.data(), static_cast<std::int64_t>(table.size() / dim),
                     static_cast<std::int64_t>(dim), rows.data(),
                     static_cast<std::int64_t>(rows.size()), out.data()),
                 "CUDA row gather");
}

}  // namespace embscale::embedding
