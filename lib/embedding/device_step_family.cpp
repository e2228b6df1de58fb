#include "embedding/device_step_family.hpp"

#include <string>

#include "core/error.hpp"
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

}  // namespace embscale::embedding
