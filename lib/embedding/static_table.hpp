// A static embedding table sharded by `key % ranks`: rank r owns the keys k with k % R == r and
// stores key k at local row k / R. Every row exists from the start (no insertion), initialised by
// UniformInitializer. Rows are float, row-major [local_rows, dim].
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/batch.hpp"
#include "embedding/initializer.hpp"

namespace embscale::embedding {

struct ModuloSharding {
  int ranks = 1;
  int owner(Key key) const noexcept { return static_cast<int>(key % ranks); }
  std::int64_t local_row(Key key) const noexcept { return key / ranks; }
  // Rows rank r owns for keys [0, vocabulary).
  std::int64_t rows_of(int rank, std::int64_t vocabulary) const noexcept {
    return vocabulary / ranks + (rank < vocabulary % ranks ? 1 : 0);
  }
};

class ShardedStaticTable {
 public:
  // Allocates and initialises this rank's rows. Throws InputError when they exceed `max_rows`
  // (HugeCTR's max_vocabulary_size_per_gpu), naming both numbers.
  ShardedStaticTable(int rank, int ranks, std::int64_t vocabulary, std::int32_t dim,
                     std::int64_t max_rows, UniformInitializer init);

  std::int32_t dim() const noexcept { return dim_; }
  std::int64_t local_rows() const noexcept { return local_rows_; }
  const ModuloSharding& sharding() const noexcept { return sharding_; }
  bool owns(Key key) const noexcept;

  // out[i, :] = row of keys[i]; every key must be owned here (checked).
  void gather(std::span<const Key> keys, std::span<float> out) const;
  // SGD, applied row by row in input order: row(keys[i]) -= learning_rate * grads[i, :].
  void apply_sgd(std::span<const Key> keys, std::span<const float> grads, float learning_rate);

  std::span<const float> row(Key key) const;
  std::span<const float> data() const noexcept { return rows_; }

 private:
  void check_owned(std::span<const Key> keys) const;

  int rank_;
  ModuloSharding sharding_;
  std::int64_t vocabulary_;
  std::int32_t dim_;
  std::int64_t local_rows_;
  std::vector<float> rows_;
};

}  // namespace embscale::embedding
