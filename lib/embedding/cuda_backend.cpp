#include "embedding/cuda_backend.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "kernels/embscale_cuda_api.h"

namespace embscale::embedding {
namespace {

std::string dl_error_text() {
  const char* text = dlerror();
  return text != nullptr ? std::string(text) : std::string("unknown dlopen error");
}

// The folder of the running executable, or empty when /proc/self/exe cannot be read.
std::filesystem::path executable_dir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return exe.parent_path();
}

template <typename Fn>
bool resolve(void* handle, const char* name, Fn& fn, std::string& why_not) {
  dlerror();
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) {
    why_not = std::string("does not export ") + name + " (not an embscale CUDA library?)";
    return false;
  }
  fn = reinterpret_cast<Fn>(symbol);
  return true;
}

}  // namespace

std::optional<CudaBackend> CudaBackend::open(const std::string& path, std::string& why_not) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    why_not = dl_error_text();
    return std::nullopt;
  }
  CudaBackend backend;
  backend.path_ = path;
  const bool complete =
      resolve(handle, "embscale_cuda_abi_version", backend.abi_version_, why_not) &&
      resolve(handle, "embscale_cuda_error_string", backend.error_string_, why_not) &&
      resolve(handle, "embscale_cuda_last_error_detail", backend.last_error_detail_, why_not) &&
      resolve(handle, "embscale_cuda_device_count", backend.device_count_, why_not) &&
      resolve(handle, "embscale_cuda_versions", backend.versions_, why_not) &&
      resolve(handle, "embscale_cuda_gather_rows_host", backend.gather_rows_host_, why_not);
  if (!complete) {
    dlclose(handle);
    return std::nullopt;
  }
  if (const int abi = backend.abi_version_(); abi != EMBSCALE_CUDA_ABI_VERSION) {
    why_not = "ABI version " + std::to_string(abi) + ", but this embscale needs " +
              std::to_string(EMBSCALE_CUDA_ABI_VERSION) + " (a library from another build?)";
    dlclose(handle);
    return std::nullopt;
  }
  // The file the dynamic loader picked (for a bare name searched on the default path).
  if (Dl_info info{}; dladdr(dlsym(handle, "embscale_cuda_abi_version"), &info) != 0 &&
                      info.dli_fname != nullptr && *info.dli_fname != '\0')
    backend.path_ = info.dli_fname;
  // Found: the handle is deliberately never closed (see load() in the header).
  return backend;
}

std::optional<CudaBackend> CudaBackend::load(std::string* why_not) {
  std::vector<std::string> tried;
  const auto give_up = [&](const std::string& hint) -> std::optional<CudaBackend> {
    if (why_not != nullptr) {
      std::string text = "cannot load the CUDA library " EMBSCALE_CUDA_LIBRARY_NAME ": ";
      for (std::size_t i = 0; i < tried.size(); ++i) text += (i == 0 ? "" : "; ") + tried[i];
      *why_not = text + ". " + hint;
    }
    return std::nullopt;
  };
  // Tries one file; records why it failed.
  const auto try_file = [&](const std::filesystem::path& file,
                            const std::string& label) -> std::optional<CudaBackend> {
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) {
      tried.push_back(label + file.string() + ": no such file");
      return std::nullopt;
    }
    std::string why;
    if (auto backend = open(file.string(), why)) return backend;
    tried.push_back(label + file.string() + ": " + why);
    return std::nullopt;
  };

  if (const char* env = std::getenv("EMBSCALE_CUDA_LIBRARY"); env != nullptr && *env != '\0') {
    // Made absolute so that a bare file name means the current folder, not a search.
    std::error_code ec;
    std::filesystem::path file = std::filesystem::absolute(env, ec);
    if (ec) file = env;
    if (auto backend = try_file(file, "EMBSCALE_CUDA_LIBRARY=")) return backend;
    return give_up("Point EMBSCALE_CUDA_LIBRARY at a " EMBSCALE_CUDA_LIBRARY_NAME
                   " built from this version of embscale, or unset it to search the default "
                   "places.");
  }
  if (const std::filesystem::path dir = executable_dir(); !dir.empty()) {
    if (auto backend = try_file(dir / EMBSCALE_CUDA_LIBRARY_NAME, "")) return backend;
    if (auto backend = try_file(dir.parent_path() / "lib" / EMBSCALE_CUDA_LIBRARY_NAME, ""))
      return backend;
  } else {
    tried.push_back("the executable's folder: /proc/self/exe is unreadable");
  }
#ifdef EMBSCALE_CUDA_BUILD_TREE_LIBRARY
  if (auto backend = try_file(EMBSCALE_CUDA_BUILD_TREE_LIBRARY, "the build tree's ")) return backend;
#endif
  {
    std::string why;
    if (auto backend = open(EMBSCALE_CUDA_LIBRARY_NAME, why)) return backend;
    tried.push_back("the default library search path: " + why);
  }
  return give_up("Build embscale with CUDA (nvcc on PATH, EMBSCALE_CUDA=AUTO or ON) or set "
                 "EMBSCALE_CUDA_LIBRARY to the library's path.");
}

int CudaBackend::abi_version() const noexcept { return abi_version_(); }

std::string CudaBackend::describe(int code) const {
  std::string text = error_string_(code);
  if (const char* detail = last_error_detail_(); detail != nullptr && *detail != '\0')
    text += std::string(": ") + detail;
  return text;
}

CudaBackend::Versions CudaBackend::versions() const {
  Versions v;
  if (const int rc = versions_(&v.runtime, &v.driver); rc != EMBSCALE_CUDA_OK)
    throw Error("embscale_cuda_versions (" + path_ + "): " + describe(rc));
  return v;
}

int CudaBackend::device_count(std::string* why_none) const {
  int count = 0;
  const int rc = device_count_(&count);
  if (rc == EMBSCALE_CUDA_OK) return count;
  if (why_none != nullptr) *why_none = describe(rc);
  return 0;
}

void CudaBackend::gather_rows_host(std::span<const float> table, std::size_t dim,
                                   std::span<const std::int64_t> rows, std::span<float> out) const {
  EMBSCALE_EXPECTS(dim > 0, "rows need at least one column");
  EMBSCALE_EXPECTS(table.size() % dim == 0, "the table holds whole rows of dim floats");
  EMBSCALE_EXPECTS(out.size() == rows.size() * dim, "out holds one row of dim floats per index");
  const int rc = gather_rows_host_(table.data(), static_cast<std::int64_t>(table.size() / dim),
                                   static_cast<std::int64_t>(dim), rows.data(),
                                   static_cast<std::int64_t>(rows.size()), out.data());
  if (rc != EMBSCALE_CUDA_OK) throw Error("CUDA row gather (" + path_ + "): " + describe(rc));
}

}  // namespace embscale::embedding
