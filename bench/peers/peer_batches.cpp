#include "peer_batches.hpp"

#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace embscale::bench {

void write_peer_batches(const std::filesystem::path& path, std::span<const Batch> batches, std::int64_t rows_per_table,
                        std::int64_t dim) {
  EMBSCALE_EXPECTS(!batches.empty(), "at least one batch to write");
  const std::int64_t B = batches.front().num_samples, T = batches.front().num_slots;
  std::ofstream out(path, std::ios::binary);
  if (!out) throw Error(path.string() + ": cannot open for writing");
  const auto put = [&](std::span<const std::int64_t> values) {
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size_bytes()));
  };
  out.write(kPeerBatchesMagic, sizeof kPeerBatchesMagic);
  const std::int64_t header[] = {static_cast<std::int64_t>(batches.size()), B, T, rows_per_table, dim};
  put(header);
  std::vector<std::int64_t> offsets, indices;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const Batch& batch = batches[i];
    if (batch.num_samples != B || batch.num_slots != T)
      throw InputError("batch " + std::to_string(i) + ": expected " + std::to_string(B) + " samples of " +
                       std::to_string(T) + " slots like batch 0, got " + std::to_string(batch.num_samples) + " of " +
                       std::to_string(batch.num_slots));
    offsets.assign(1, 0);
    indices.clear();
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t b = 0; b < B; ++b) {
        for (const Key key : batch.bag(b * T + t)) indices.push_back(key - t * rows_per_table);
        offsets.push_back(static_cast<std::int64_t>(indices.size()));
      }
    const std::int64_t n = static_cast<std::int64_t>(indices.size());
    put(std::span<const std::int64_t>(&n, 1));
    put(offsets);
    put(indices);
  }
  if (!out.flush()) throw Error(path.string() + ": write failed");
}

}  // namespace embscale::bench
