#include "kv/device_table.hpp"

#include <memory>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "kv/device_executor.hpp"

namespace embscale::kv {
namespace {

// The library, checked for a GPU before any table memory is asked of it.
const device::DeviceLibrary& with_a_gpu(const device::DeviceLibrary& library) {
  if (library.device_count() == 0) throw Error("the GPU KV table needs a GPU: " + library.path() + " finds none");
  return library;
}

}  // namespace

DeviceTable::DeviceTable(TableOptions options) : DeviceTable(std::move(options), device::DeviceLibrary::load()) {}

DeviceTable::DeviceTable(TableOptions options, const device::DeviceLibrary& library)
    : PortableTable(std::move(options), [&library](const TableGeometry& geometry) {
        return std::make_unique<DeviceExecutor>(with_a_gpu(library), geometry);
      }) {}

DeviceTable::DeviceTable(TableOptions options, const device::DeviceLibrary& library, void* stream)
    : PortableTable(std::move(options), [&library, stream](const TableGeometry& geometry) {
        return std::make_unique<DeviceExecutor>(with_a_gpu(library), geometry, stream);
      }) {}

}  // namespace embscale::kv
