// Where the device library (libembscale_cuda.so) is looked for, in order. Kept apart from the
// loading so that the order can be read, tested and printed without loading anything.
#pragma once

#include <string>
#include <vector>

namespace embscale::device {

// The environment variable that names the library's file and stops the search elsewhere.
inline constexpr const char* kLibraryVariable = "EMBSCALE_CUDA_LIBRARY";

struct SearchPlace {
  // A file path, or the bare library name: a path without '/' is dlopen's own search
  // (LD_LIBRARY_PATH, ld.so.cache), which no existence check can stand in for.
  std::string path;
  // How an error names the place, e.g. "EMBSCALE_CUDA_LIBRARY=/opt/x/libembscale_cuda.so".
  std::string description;
};

// The places, first to last:
//   1. $EMBSCALE_CUDA_LIBRARY when set and not empty (made absolute), and nowhere else, so that a
//      wrong path fails instead of silently finding another copy;
//   2. the folder of the running executable (/proc/self/exe), then ../lib beside it;
//   3. the copy in the build tree this libembscale was configured with (when built with CUDA);
//   4. the dynamic loader's search path.
std::vector<SearchPlace> library_search_places();

// What to do when no place held a loadable library: how to point the variable elsewhere when it
// is set, else how to build the library or name it with the variable.
std::string library_search_hint();

}  // namespace embscale::device
