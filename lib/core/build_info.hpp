// What was built: the version and the git commit of the source tree ("-dirty" when it had
// uncommitted changes, "unknown" outside git). Generated at every build (cmake/build_info.cmake).
#pragma once

namespace embscale::build_info {

const char* version();
const char* git_sha();

}  // namespace embscale::build_info
