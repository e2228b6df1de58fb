#include "embedding/static_table.hpp"

#include <string>

#include "core/error.hpp"
#include "embedding/row_gather.hpp"

namespace embscale::embedding {

ShardedStaticTable::ShardedStaticTable(int rank, int ranks, std::int64_t vocabulary, std::int32_t dim,
                                       std::int64_t max_rows, UniformInitializer init)
    : rank_(rank), sharding_{ranks}, vocabulary_(vocabulary), dim_(dim),
      local_rows_(sharding_.rows_of(rank, vocabulary)) {
  EMBSCALE_EXPECTS(ranks >= 1 && rank >= 0 && rank < ranks, "rank out of range");
  EMBSCALE_EXPECTS(dim >= 1 && vocabulary >= 1, "table needs dim >= 1 and vocabulary >= 1");
  if (local_rows_ > max_rows)
    throw InputError("sparse_embedding_hparam.max_vocabulary_size_per_gpu: expected at least " +
                     std::to_string(local_rows_) + " (vocabulary " + std::to_string(vocabulary) + " over " +
                     std::to_string(ranks) + " ranks), got " + std::to_string(max_rows));
  rows_.resize(static_cast<std::size_t>(local_rows_) * static_cast<std::size_t>(dim_));
  const auto udim = static_cast<std::size_t>(dim_);
  for (std::int64_t r = 0; r < local_rows_; ++r) {
    const Key key = r * ranks + rank;
    init(key, std::span<float>(rows_).subspan(static_cast<std::size_t>(r) * udim, udim));
  }
}

bool ShardedStaticTable::owns(Key key) const noexcept {
  return key >= 0 && key < vocabulary_ && sharding_.owner(key) == rank_;
}

void ShardedStaticTable::check_owned(std::span<const Key> keys) const {
  for (const Key k : keys)
    if (!owns(k)) throw Error("rank " + std::to_string(rank_) + " received key " + std::to_string(k) + " it does not own");
}

void ShardedStaticTable::gather(std::span<const Key> keys, std::span<float> out) const {
  check_owned(keys);
  EMBSCALE_EXPECTS(out.size() == keys.size() * static_cast<std::size_t>(dim_), "gather output has the wrong size");
  std::vector<std::int64_t> local(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) local[i] = sharding_.local_row(keys[i]);
  gather_rows(rows_.data(), static_cast<std::size_t>(dim_), local, out.data());
}

void ShardedStaticTable::apply_sgd(std::span<const Key> keys, std::span<const float> grads, float learning_rate) {
  check_owned(keys);
  EMBSCALE_EXPECTS(grads.size() == keys.size() * static_cast<std::size_t>(dim_), "gradient has the wrong size");
  const auto udim = static_cast<std::size_t>(dim_);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    float* row = rows_.data() + static_cast<std::size_t>(sharding_.local_row(keys[i])) * udim;
    const float* g = grads.data() + i * udim;
    for (std::size_t d = 0; d < udim; ++d) row[d] -= learning_rate * g[d];
  }
}

std::span<const float> ShardedStaticTable::row(Key key) const {
  check_owned(std::span<const Key>(&key, 1));
  const auto udim = static_cast<std::size_t>(dim_);
  return std::span<const float>(rows_).subspan(static_cast<std::size_t>(sharding_.local_row(key)) * udim, udim);
}

}  // namespace embscale::embedding
