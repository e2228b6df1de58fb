#include "device/row_gather.hpp"

#include "core/error.hpp"

namespace embscale::device {

void gather_rows_host(const DeviceLibrary& library, std::span<const float> table, std::size_t dim,
                      std::span<const std::int64_t> rows, std::span<float> out) {
  EMBSCALE_EXPECTS(dim > 0, "rows need at least one column");
  EMBSCALE_EXPECTS(table.size() % dim == 0, "the table holds whole rows of dim floats");
  EMBSCALE_EXPECTS(out.size() == rows.size() * dim, "out holds one row of dim floats per index");
  library.check(
      library.kernels(KernelFamily::row_gather)
          .gather_rows_host(table.data(), static_cast<std::int64_t>(table.size() / dim), static_cast<std::int64_t>(dim),
                            rows.data(), static_cast<std::int64_t>(rows.size()), out.data()),
      "CUDA row gather");
}

}  // namespace embscale::device
