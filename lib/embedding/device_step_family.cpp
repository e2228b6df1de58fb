#include "embedding/device_step_family.hpp"

#include <string>

#include "core/error.hpp"
#include "embedding/portable/optimizer_ref.hpp"
#include "embedding/portable/rows_ref.hpp"
#include "embedding/portable/step_ref.hpp"

namespace embscale::embedding {

const device::DeviceFunctions& embedding_step_family(const device::DeviceLibrary& library) {
  const auto& f = library.kernels(device::KernelFamily::embedding_step);
  std::uint64_t owner = 0, placement = 0, pair = 0;
  library.check(f.embedding_step_layout(&owner, &placement, &pair), "embedding_step layout");
  if (owner != sizeof(portable::OwnerRef) || placement != sizeof(portable::PlacementRef) ||
      pair != sizeof(portable::KeyPosition))
    throw Error(library.path() + ": kernel family embedding_step was built with other layouts (" +
                std::to_string(owner) + ", " + std::to_string(placement) + " and " + std::to_string(pair) +
                " bytes, this embscale " + std::to_string(sizeof(portable::OwnerRef)) + ", " +
                std::to_string(sizeof(portable::PlacementRef)) + " and " +
                std::to_string(sizeof(portable::KeyPosition)) + "): rebuild both from one source");
  return f;
}

const device::DeviceFunctions& embedding_rows_family(const device::DeviceLibrary& library) {
  const auto& f = library.kernels(device::KernelFamily::embedding_rows);
  std::uint64_t range_bytes = 0, optimizer_bytes = 0;
  library.check(f.embedding_rows_layout(&range_bytes, &optimizer_bytes), "embedding_rows layout");
  if (range_bytes != sizeof(portable::OwnedRange) || optimizer_bytes != sizeof(portable::OptimizerRef))
    throw Error(library.path() + ": kernel family embedding_rows was built with other layouts (" +
                std::to_string(range_bytes) + " and " + std::to_string(optimizer_bytes) + " bytes, this embscale " +
                std::to_string(sizeof(portable::OwnedRange)) + " and " +
                std::to_string(sizeof(portable::OptimizerRef)) + "): rebuild both from one source");
  return f;
}

}  // namespace embscale::embedding
