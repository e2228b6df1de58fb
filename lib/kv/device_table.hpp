// DeviceTable: the GPU dynamic embedding table. A PortableTable (kv/portable_table.hpp: HostTable's
// calls with their exact semantics, from the portable code) whose arrays live in GPU memory and
// whose batches run on the GPU (DeviceExecutor, kv/device_executor.hpp). Its KvTable is
// DeviceKvTable<Key> (kv/keyed_kv_table.hpp). Calls take spans in host memory and return when
// their results are there (the executor copies batches in and out), but the *_resident calls,
// whose batch is in the GPU's memory already (the embedding step's DeviceKvRowStore); dumps are the CPU table's
// files, so a table saved on a GPU loads on a CPU and back.
#pragma once

#include "device/device_library.hpp"
#include "kv/portable_table.hpp"

namespace embscale::kv {

class DeviceTable final : public PortableTable {
 public:
  // On the current GPU through the library DeviceLibrary::load() finds. Throws embscale::Error
  // when there is no library, no GPU, or the library lacks the GPU table (its kv_table family).
  explicit DeviceTable(TableOptions options);
  DeviceTable(TableOptions options, const device::DeviceLibrary& library);
  // Its calls queued on `stream` (a stream of the current GPU that the caller keeps alive, a GPU
  // step's; null: the default stream), after the caller's work; the *_resident calls take
  // batches already on that GPU.
  DeviceTable(TableOptions options, const device::DeviceLibrary& library, void* stream);
};

}  // namespace embscale::kv
