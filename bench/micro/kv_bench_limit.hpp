// The machine's own limit for a batch (implementation `gather_limit`): the row traffic of a
// call with a perfect index, no hashing and no keys. `batch` row indices drawn uniformly from an
// array of capacity rows of dim floats (the size of the table's row storage, in a MappedArray on
// transparent huge pages like the table's), then
// * gather (find, find_or_insert): copy row idx[i] to out row i;
// * scatter (insert_or_assign, insert_and_evict): copy in row i to row idx[i];
// each with the rows kAhead positions ahead prefetched, on `threads` threads in contiguous
// ranges. The scatter writes back the rows a gather read (the array never changes), so both
// check themselves against the same checksum.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "kv/mapped_array.hpp"
#include "kv_bench_peers.hpp"
#include "kv_bench_workload.hpp"

namespace embscale::kv_bench {

class GatherLimit {
 public:
  // Rows prefetched ahead of the copy (16-32 measured alike on the development VM).
  static constexpr std::size_t kAhead = 16;

  GatherLimit(std::size_t dim, Scale scale) : dim_(dim), rows_(scale.capacity() * dim * sizeof(float), std::string()) {
    float* a = data();
    for (std::size_t r = 0; r < scale.capacity(); ++r)
      for (std::size_t d = 0; d < dim; ++d) a[r * dim + d] = value(r, d);
    std::mt19937_64 rng(0x6c696d6974ULL);
    std::uniform_int_distribution<std::uint32_t> pick(0, static_cast<std::uint32_t>(scale.capacity() - 1));
    index_.resize(scale.batch);
    for (auto& i : index_) {
      i = pick(rng);
      for (std::size_t d = 0; d < dim; ++d) checksum_ += value(i, d);
    }
  }

  std::size_t batch() const noexcept { return index_.size(); }
  double checksum() const noexcept { return checksum_; }

  void gather(std::span<float> out, int threads) const {
    const float* a = data();
    const std::size_t bytes = dim_ * sizeof(float);
    on_threads(index_.size(), threads, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        if (i + kAhead < end) prefetch(a + index_[i + kAhead] * dim_, bytes, 0);
        std::memcpy(out.data() + i * dim_, a + index_[i] * dim_, bytes);
      }
    });
  }

  void scatter(std::span<const float> in, int threads) {
    float* a = data();
    const std::size_t bytes = dim_ * sizeof(float);
    on_threads(index_.size(), threads, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        if (i + kAhead < end) prefetch(a + index_[i + kAhead] * dim_, bytes, 1);
        std::memcpy(a + index_[i] * dim_, in.data() + i * dim_, bytes);
      }
    });
  }

 private:
  static float value(std::size_t r, std::size_t d) noexcept { return static_cast<float>((r * 31 + d) & 0xFF); }
  static void prefetch(const float* row, std::size_t bytes, int write) noexcept {
    const auto* p = reinterpret_cast<const char*>(row);
    for (std::size_t line = 0; line < bytes; line += 64) {
      if (write) __builtin_prefetch(p + line, 1);
      else __builtin_prefetch(p + line, 0);
    }
  }
  float* data() noexcept { return reinterpret_cast<float*>(rows_.data()); }
  const float* data() const noexcept { return reinterpret_cast<const float*>(rows_.data()); }

  std::size_t dim_;
  kv::MappedArray rows_;
  std::vector<std::uint32_t> index_;
  double checksum_ = 0;
};

}  // namespace embscale::kv_bench
