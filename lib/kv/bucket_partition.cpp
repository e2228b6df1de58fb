#include "kv/bucket_partition.hpp"

#include "core/error.hpp"
#include "core/hash.hpp"

namespace embscale::kv {

std::int64_t bucket_of(std::uint64_t key, std::int64_t buckets) noexcept {
  return static_cast<std::int64_t>(mix64(key) & static_cast<std::uint64_t>(buckets - 1));
}

BucketPartition partition_by_bucket(std::span<const std::uint64_t> keys, std::int64_t buckets, std::size_t groups) {
  BucketPartition p;
  // bucket * groups stays below 2^64 while buckets < 2^52 and groups <= 4096.
  EMBSCALE_EXPECTS(groups >= 1 && groups <= 4096 && buckets >= 1 && buckets < (std::int64_t{1} << 52),
                   "partition_by_bucket: groups in [1, 4096], buckets below 2^52");
  const auto group_of = [&](std::uint64_t key) {
    const auto b = static_cast<std::uint64_t>(bucket_of(key, buckets));
    return static_cast<std::size_t>(b * groups / static_cast<std::uint64_t>(buckets));
  };
  p.starts.assign(groups + 1, 0);
  std::vector<std::uint32_t> group(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    group[i] = static_cast<std::uint32_t>(group_of(keys[i]));
    ++p.starts[group[i] + 1];
  }
  for (std::size_t g = 0; g < groups; ++g) p.starts[g + 1] += p.starts[g];
  std::vector<std::size_t> next(p.starts.begin(), p.starts.end() - 1);
  p.order.resize(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) p.order[next[group[i]]++] = static_cast<std::uint32_t>(i);
  return p;
}

}  // namespace embscale::kv
