// HostExecutor: a PortableTable's arrays in host memory and its batches run on the calling thread
// (kv/portable/host_batch.hpp: the stable sort by bucket the device's radix sort computes, then
// every group with a host tile of the device's width). What the GPU table is tested on in CI.
#pragma once

#include <cstdint>
#include <vector>

#include "kv/batch_executor.hpp"

namespace embscale::kv {

class HostExecutor final : public BatchExecutor {
 public:
  explicit HostExecutor(const TableGeometry& geometry);

  void resize(std::uint64_t buckets) override;
  void clear() override;
  void run(portable::TableState state, const portable::BatchRef& batch, bool grouped) override;
  void export_entries(std::uint64_t first, std::uint64_t end, std::uint64_t min_score, std::vector<std::uint64_t>& keys,
                      std::vector<float>& values, std::vector<std::uint64_t>& scores) const override;

 private:
  portable::TableArrays arrays() noexcept;
  portable::SketchRef sketch() noexcept;

  TableGeometry geometry_;
  std::uint64_t buckets_ = 0;
  std::vector<std::uint64_t> keys_, scores_;
  std::vector<std::uint8_t> digests_;
  std::vector<float> rows_;               // the near slots' rows
  std::vector<float> far_rows_;           // hybrid mode: the others' (kv/portable/table_ref.hpp)
  std::vector<std::uint8_t> counters_;    // the admission sketch: buckets x blocks x 64
  std::vector<std::uint32_t> sightings_;  // per bank
};

// The admission banks of `buckets` buckets grown to `new_buckets` (a power-of-two multiple): bank
// b of the new count is a copy of bank b & (buckets - 1), its parent, whose keys it now holds
// (kv/admission.hpp). The device executor grows its banks on the host with it.
void grow_sketch_banks(std::vector<std::uint8_t>& counters, std::vector<std::uint32_t>& sightings,
                       std::uint64_t blocks_per_bank, std::uint64_t buckets, std::uint64_t new_buckets);

}  // namespace embscale::kv
