// Partition of a batch by bucket group, for running one batch on several threads while keeping
// the result of applying its keys one by one in input order: keys of different buckets commute,
// so each group of buckets can run on its own thread as long as the keys of one group keep
// their input order (a stable counting sort).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace embscale::kv {

struct BucketPartition {
  std::vector<std::uint32_t> order;  // key indices, grouped; input order within each group
  std::vector<std::size_t> starts;   // group g is order[starts[g] .. starts[g + 1])
  std::size_t groups() const noexcept { return starts.empty() ? 0 : starts.size() - 1; }
};

// Groups are contiguous ranges of buckets (bucket * groups / buckets), so a thread's buckets are
// neighbours in memory. `buckets` is a power of two; `groups` >= 1.
BucketPartition partition_by_bucket(std::span<const std::uint64_t> keys, std::int64_t buckets, std::size_t groups);

// The bucket of a key in a table of `buckets` buckets (a power of two): the low bits of mix64.
std::int64_t bucket_of(std::uint64_t key, std::int64_t buckets) noexcept;

}  // namespace embscale::kv
