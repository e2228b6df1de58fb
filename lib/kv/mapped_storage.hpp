// MappedStorage: a Storage (kv/storage.hpp) that is a HostTable whose rows live in an unnamed
// file of a directory (kv/mapped_array.hpp): the slow tier of a table that outgrows memory. It
// holds at most `capacity` entries; beyond that it evicts, bucket by bucket, the lowest score
// (insert returns how many it dropped), like any HostTable.
#pragma once

#include <string>

#include "kv/host_table.hpp"
#include "kv/storage.hpp"

namespace embscale::kv {

class MappedStorage final : public Storage {
 public:
  MappedStorage(std::int64_t row_width, std::int64_t capacity, std::string directory,
                std::int64_t bucket_capacity = 128);

  std::string describe() const override { return "mapped:" + directory_; }
  std::int64_t row_width() const override { return table_.row_width(); }
  std::int64_t size() const override { return table_.size(); }
  void find(std::span<const std::uint64_t> keys, std::span<float> values, std::span<std::uint8_t> founds,
            std::span<std::uint64_t> scores) const override;
  std::int64_t insert(std::span<const std::uint64_t> keys, std::span<const float> values,
                      std::span<const std::uint64_t> scores) override;
  std::int64_t erase(std::span<const std::uint64_t> keys) override;
  void for_each(const Visitor& visit) const override;

 private:
  std::string directory_;
  HostTable table_;
};

}  // namespace embscale::kv
