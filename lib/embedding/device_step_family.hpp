// The embedding_step kernel family (device/families/embedding_step.h) of a loaded device library,
// checked once against this build: the plain-data refs it takes by address (portable/step_ref.hpp)
// must have the sizes this embscale gives them.
#pragma once

#include "device/device_library.hpp"

namespace embscale::embedding {

// The family's functions; an Error naming the library when it lacks the family or was built with
// other layouts.
const device::DeviceFunctions& embedding_step_family(const device::DeviceLibrary& library);

}  // namespace embscale::embedding
