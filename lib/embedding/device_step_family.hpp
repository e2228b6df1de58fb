// The kernel families of the GPU step in a loaded device library, each checked once against this
// build: the plain-data refs they take by address must have the sizes this embscale gives them.
//   embedding_step (device/families/embedding_step.h): routing, de-duplication, pooling
//     (portable/step_ref.hpp's refs);
//   embedding_rows (device/families/embedding_rows.h): the rows' gather and update
//     (portable::OwnedRange, portable::OptimizerRef).
#pragma once

#include "device/device_library.hpp"

namespace embscale::embedding {

// The family's functions; an Error naming the library when it lacks the family or was built with
// other layouts.
const device::DeviceFunctions& embedding_step_family(const device::DeviceLibrary& library);
const device::DeviceFunctions& embedding_rows_family(const device::DeviceLibrary& library);

}  // namespace embscale::embedding
