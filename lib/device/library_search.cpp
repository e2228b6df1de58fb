#include "device/library_search.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/install_layout.hpp"
#include "device/device_abi.h"

namespace embscale::device {
namespace {

// The variable's value; nullptr when unset or empty (an empty value means "not set", so that
// `EMBSCALE_CUDA_LIBRARY= cmd` restores the search).
const char* library_variable() {
  const char* value = std::getenv(kLibraryVariable);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

std::vector<SearchPlace> library_search_places() {
  if (const char* env = library_variable()) {
    // Made absolute so that a bare file name means the current folder, not dlopen's search.
    std::error_code ec;
    std::filesystem::path file = std::filesystem::absolute(env, ec);
    if (ec) file = env;
    return {{file.string(), std::string(kLibraryVariable) + "=" + file.string()}};
  }
  std::vector<SearchPlace> places;
  if (const std::filesystem::path dir = executable_directory(); !dir.empty()) {
    for (const auto& file : {dir / EMBSCALE_CUDA_LIBRARY_NAME, dir.parent_path() / "lib" / EMBSCALE_CUDA_LIBRARY_NAME})
      places.push_back({file.string(), file.string()});
  }
#ifdef EMBSCALE_CUDA_BUILD_TREE_LIBRARY  // set by kernels/CMakeLists.txt on this file only
  places.push_back(
      {EMBSCALE_CUDA_BUILD_TREE_LIBRARY, std::string("the build tree's ") + EMBSCALE_CUDA_BUILD_TREE_LIBRARY});
#endif
  places.push_back({EMBSCALE_CUDA_LIBRARY_NAME, "the dynamic loader's search path"});
  return places;
}

std::string library_search_hint() {
  const std::string variable = kLibraryVariable;
  if (library_variable() != nullptr)
    return "Point " + variable +
           " at a " EMBSCALE_CUDA_LIBRARY_NAME
           " built from this version of embscale, or unset it to search the default places.";
  return "Build embscale with CUDA (nvcc on PATH, EMBSCALE_CUDA=AUTO or ON) or set " + variable +
         " to the library's path.";
}

}  // namespace embscale::device
