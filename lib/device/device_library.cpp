#include "device/device_library.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "device/library_search.hpp"

namespace embscale::device {
namespace {

std::string dl_error_text() {
  const char* text = dlerror();
  return text != nullptr ? std::string(text) : std::string("unknown dlopen error");
}

template <typename Fn> bool resolve(void* handle, const char* name, Fn& fn) {
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) return false;
  fn = reinterpret_cast<Fn>(symbol);
  return true;
}

// Closes a dlopen handle unless released: a library that fails a check is closed again, one
// that passes stays open for the life of the process.
class HandleGuard {
 public:
  explicit HandleGuard(void* handle) : handle_(handle) {}
  HandleGuard(const HandleGuard&) = delete;
  HandleGuard& operator=(const HandleGuard&) = delete;
  ~HandleGuard() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  void release() noexcept { handle_ = nullptr; }

 private:
  void* handle_;
};

// " a, b, c" (the names a check found missing).
std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) text += (i == 0 ? " " : ", ") + names[i];
  return text;
}

}  // namespace

std::string_view family_name(KernelFamily family) noexcept {
  switch (family) {
#define EMBSCALE_DEVICE_FAMILY_NAME(name, version, functions) \
  case KernelFamily::name: return #name;
    EMBSCALE_DEVICE_KERNEL_FAMILIES(EMBSCALE_DEVICE_FAMILY_NAME)
#undef EMBSCALE_DEVICE_FAMILY_NAME
  }
  return "unknown kernel family";
}

const DeviceFunctions& DeviceLibrary::kernels(KernelFamily family) const {
  if (const std::string& problem = family_problem(family); !problem.empty())
    throw Error(path_ + ": kernel family " + std::string(family_name(family)) + ": " + problem);
  return functions_;
}

std::optional<DeviceLibrary> DeviceLibrary::try_open(const std::string& path, std::string& why_not) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    why_not = dl_error_text();
    return std::nullopt;
  }
  HandleGuard guard(handle);
  DeviceLibrary library;
  library.path_ = path;
  DeviceFunctions& fns = library.functions_;
  // The version first: a library of another ABI version may lack functions of this one (or
  // export them with other meanings), and its version says so more plainly than a symbol list.
  if (!resolve(handle, "embscale_cuda_abi_version", fns.abi_version)) {
    why_not = "does not export embscale_cuda_abi_version (not an embscale device library?)";
    return std::nullopt;
  }
  if (const int abi = fns.abi_version(); abi != EMBSCALE_CUDA_ABI_VERSION) {
    why_not = "ABI version " + std::to_string(abi) + ", but this embscale needs " +
              std::to_string(EMBSCALE_CUDA_ABI_VERSION) + " (a library from another build?)";
    return std::nullopt;
  }
  std::vector<std::string> missing;
#define EMBSCALE_DEVICE_RESOLVE(name) \
  if (!resolve(handle, "embscale_cuda_" #name, fns.name)) missing.push_back("embscale_cuda_" #name);
  EMBSCALE_DEVICE_CORE_FUNCTIONS(EMBSCALE_DEVICE_RESOLVE)
  if (!missing.empty()) {
    why_not = "does not export" + joined(missing) + " (yet it reports ABI version " +
              std::to_string(EMBSCALE_CUDA_ABI_VERSION) + ", which has them: a partial or broken build?)";
    return std::nullopt;
  }
  // Each kernel family on its own: its version, then its functions; a family that fails keeps
  // null pointers and a reason, and the library still loads.
#define EMBSCALE_DEVICE_RESOLVE_FAMILY(family, version, functions)                                   \
  {                                                                                                  \
    std::string& problem = library.family_problems_[static_cast<std::size_t>(KernelFamily::family)]; \
    int found = 0;                                                                                   \
    missing.clear();                                                                                 \
    if (fns.family_version(#family, &found) != EMBSCALE_CUDA_OK || found == 0) {                     \
      problem = "the library does not have it";                                                      \
    } else if (found != (version)) {                                                                 \
      problem = "the library has version " + std::to_string(found) + ", this embscale needs " +      \
                std::to_string(version) + " (a library from another build?)";                        \
    } else {                                                                                         \
      functions(EMBSCALE_DEVICE_RESOLVE) if (!missing.empty()) problem =                             \
          "the library does not export" + joined(missing) + " (a partial build?)";                   \
    }                                                                                                \
    if (!problem.empty()) {                                                                          \
      DeviceFunctions cleared;                                                                       \
      functions(EMBSCALE_DEVICE_CLEAR)                                                               \
    }                                                                                                \
  }
#define EMBSCALE_DEVICE_CLEAR(name) fns.name = cleared.name;
  EMBSCALE_DEVICE_KERNEL_FAMILIES(EMBSCALE_DEVICE_RESOLVE_FAMILY)
#undef EMBSCALE_DEVICE_CLEAR
#undef EMBSCALE_DEVICE_RESOLVE_FAMILY
#undef EMBSCALE_DEVICE_RESOLVE
  // The file the dynamic loader picked (for a bare name searched on the default path).
  if (Dl_info info{}; dladdr(dlsym(handle, "embscale_cuda_abi_version"), &info) != 0 && info.dli_fname != nullptr &&
                      *info.dli_fname != '\0')
    library.path_ = info.dli_fname;
  guard.release();  // never closed (see open() in the header)
  return library;
}

DeviceLibrary DeviceLibrary::open(const std::string& path) {
  std::string why;
  if (auto library = try_open(path, why)) return *std::move(library);
  throw Error("cannot load the device library " + path + ": " + why);
}

DeviceLibrary DeviceLibrary::load() {
  std::string tried;
  for (const SearchPlace& place : library_search_places()) {
    std::string why;
    std::error_code ec;
    if (place.path.find('/') != std::string::npos && !std::filesystem::exists(place.path, ec)) {
      why = "no such file";
    } else if (auto library = try_open(place.path, why)) {
      return *std::move(library);
    }
    tried += (tried.empty() ? "" : "; ") + place.description + ": " + why;
  }
  throw Error("cannot load the CUDA library " EMBSCALE_CUDA_LIBRARY_NAME ": " + tried + ". " + library_search_hint());
}

std::string DeviceLibrary::describe(int code) const {
  std::string text = functions_.error_string(code);
  if (const char* detail = functions_.last_error_detail(); detail != nullptr && *detail != '\0')
    text += std::string(": ") + detail;
  return text;
}

void DeviceLibrary::check(int code, std::string_view what) const {
  if (code != EMBSCALE_CUDA_OK) throw Error(std::string(what) + " (" + path_ + "): " + describe(code));
}

DeviceLibrary::Versions DeviceLibrary::versions() const {
  Versions v;
  check(functions_.versions(&v.runtime, &v.driver), "embscale_cuda_versions");
  return v;
}

int DeviceLibrary::device_count(std::string* why_none) const {
  int count = 0;
  const int rc = functions_.device_count(&count);
  if (rc == EMBSCALE_CUDA_OK) return count;
  if (why_none != nullptr) *why_none = describe(rc);
  return 0;
}

DeviceLibrary::DeviceProperties DeviceLibrary::properties(int device) const {
  DeviceProperties p;
  std::array<char, 256> name{};
  check(functions_.device_properties(device, name.data(), static_cast<std::int64_t>(name.size()), &p.compute_major,
                                     &p.compute_minor, &p.memory_bytes),
        "device properties of GPU " + std::to_string(device));
  p.name = name.data();
  return p;
}

}  // namespace embscale::device
