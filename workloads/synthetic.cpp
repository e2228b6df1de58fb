#include "workloads/synthetic.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/rng.hpp"

namespace embscale::workloads {
namespace {

// Independent seeds for labels and dense features (keys use theirs: slot_generator.cpp), so that
// adding dense features, say, does not change the keys drawn for a seed.
constexpr std::uint64_t kLabelDomain = 2;
constexpr std::uint64_t kDenseDomain = 3;

// Probability that a sample's click label is flipped (label noise).
constexpr double kLabelNoise = 0.1;

}  // namespace

SampleRange sample_share(std::int64_t global, int rank, int ranks) {
  EMBSCALE_EXPECTS(ranks >= 1 && rank >= 0 && rank < ranks, "rank out of range");
  const std::int64_t base = global / ranks;
  const std::int64_t extra = global % ranks;
  return {rank * base + std::min<std::int64_t>(rank, extra), base + (rank < extra ? 1 : 0)};
}

SyntheticGenerator::SyntheticGenerator(const config::DataLayer& data, std::uint64_t seed, std::int64_t global_batch,
                                       std::optional<std::uint64_t> label_model_seed)
    : data_(data), seed_(seed), global_batch_(global_batch) {
  if (const auto& model = data.synthetic.planted_labels)
    planted_.emplace(*model, model->seed.value_or(label_model_seed.value_or(seed)));
  EMBSCALE_EXPECTS(global_batch >= 1, "global batch must be >= 1");
  EMBSCALE_EXPECTS(data.slot_num >= 1, "a batch needs at least one slot");
  EMBSCALE_EXPECTS(data.slot_num == static_cast<std::int32_t>(data.slot_size_array.size()),
                   "slot_num must equal the number of slot sizes");
  EMBSCALE_EXPECTS(data.synthetic.slots.size() == data.slot_size_array.size(),
                   "the synthetic source needs one workload per slot");
  slot_offsets_.assign(1, 0);
  for (const auto size : data.slot_size_array) slot_offsets_.push_back(slot_offsets_.back() + size);
  for (std::int32_t j = 0; j < data.slot_num; ++j) {
    const auto uj = static_cast<std::size_t>(j);
    slots_.emplace_back(data.synthetic.slots[uj], static_cast<std::uint64_t>(data.slot_size_array[uj]),
                        slot_offsets_[uj], seed, j);
  }
}

Batch SyntheticGenerator::generate(std::int64_t iteration, int rank, int ranks) const {
  return generate_range(iteration, sample_share(global_batch_, rank, ranks));
}

Batch SyntheticGenerator::generate_range(std::int64_t iteration, SampleRange range) const {
  EMBSCALE_EXPECTS(range.first >= 0 && range.count >= 0 && range.first + range.count <= global_batch_,
                   "sample range outside the global batch");
  const std::int64_t cycle = data_.synthetic.batch_cycle;
  if (cycle > 0 && iteration >= 0) iteration %= cycle;  // a pool of `cycle` batches, replayed
  Batch batch;
  batch.first_sample = range.first;
  batch.num_samples = range.count;
  batch.num_slots = data_.slot_num;
  batch.label_dim = data_.label_dim;
  batch.dense_dim = data_.dense_dim;
  const auto bags = static_cast<std::size_t>(batch.num_bags());
  batch.offsets.resize(bags + 1);
  std::int64_t max_keys = 0;
  for (const auto& slot : data_.synthetic.slots) max_keys += slot.nnz;
  batch.keys.reserve(static_cast<std::size_t>(range.count * max_keys));
  batch.labels.resize(static_cast<std::size_t>(range.count * data_.label_dim));
  batch.dense.resize(static_cast<std::size_t>(range.count * data_.dense_dim));
  std::vector<SharedSampler> samplers;  // the iteration's distribution of every slot
  for (const auto& slot : slots_) samplers.push_back(slot.sampler_at(std::max<std::int64_t>(iteration, 0)));

  // Keys slot by slot (a slot's bags of the whole range in one batch draw: the same keys as bag by
  // bag), then laid out sample-major. Bag (sample, slot) draws from stream sample * slots + slot.
  const auto slot_count = static_cast<std::size_t>(data_.slot_num);
  const auto first_global_sample = static_cast<std::uint64_t>(iteration * global_batch_ + range.first);
  std::vector<std::vector<Key>> slot_keys(slot_count);
  std::vector<std::vector<std::int64_t>> slot_bag_sizes(slot_count);
  std::vector<std::uint64_t> bag_streams(static_cast<std::size_t>(range.count));
  for (std::size_t slot = 0; slot < slot_count; ++slot) {
    for (std::size_t s = 0; s < bag_streams.size(); ++s) bag_streams[s] = (first_global_sample + s) * slot_count + slot;
    slots_[slot].append_bags(*samplers[slot], bag_streams, slot_keys[slot], slot_bag_sizes[slot]);
  }
  std::vector<std::size_t> slot_read(slot_count, 0);  // keys of each slot laid out so far
  for (std::size_t s = 0; s < bag_streams.size(); ++s)
    for (std::size_t slot = 0; slot < slot_count; ++slot) {
      batch.offsets[s * slot_count + slot] = static_cast<std::int64_t>(batch.keys.size());
      const auto size = static_cast<std::size_t>(slot_bag_sizes[slot][s]);
      const auto from = slot_keys[slot].begin() + static_cast<std::ptrdiff_t>(slot_read[slot]);
      batch.keys.insert(batch.keys.end(), from, from + static_cast<std::ptrdiff_t>(size));
      slot_read[slot] += size;
    }
  batch.offsets[bags] = static_cast<std::int64_t>(batch.keys.size());

  const CounterRng label_rng(hash_combine(seed_, kLabelDomain), 0);
  const CounterRng dense_rng(hash_combine(seed_, kDenseDomain), 0);
  for (std::int64_t s = 0; s < range.count; ++s) {
    const auto global_sample = static_cast<std::uint64_t>(iteration * global_batch_ + range.first + s);
    for (std::int32_t d = 0; d < data_.dense_dim; ++d)  // dense features: U[0, 1)
      batch.dense[static_cast<std::size_t>(s * data_.dense_dim + d)] = static_cast<float>(dense_rng.uniform(
          global_sample * static_cast<std::uint64_t>(data_.dense_dim) + static_cast<std::uint64_t>(d)));
    if (planted_) {  // the planted model's labels: its logit of the sample's keys and dense features
      const double z = planted_->logit(batch, s);
      for (std::int32_t l = 0; l < data_.label_dim; ++l)
        batch.labels[static_cast<std::size_t>(s * data_.label_dim + l)] =
            planted_->draw(global_sample, l, data_.label_dim, z);
      continue;
    }
    // Click labels: a pure function of the sample's first key, flipped with probability
    // kLabelNoise. Clicks then depend on what the embeddings encode, so training can learn them
    // (random labels would leave the loss at its noise floor), and half the samples click. A
    // sample whose bags are all empty (nnz_min 0) clicks by its index instead.
    const auto sample_keys = static_cast<std::size_t>(batch.offsets[static_cast<std::size_t>(s * data_.slot_num)]);
    const Key first_key = sample_keys < batch.keys.size() ? batch.keys[sample_keys] : static_cast<Key>(global_sample);
    for (std::int32_t l = 0; l < data_.label_dim; ++l) {
      const std::uint64_t label_stream =
          global_sample * static_cast<std::uint64_t>(data_.label_dim) + static_cast<std::uint64_t>(l);
      const bool clicked =
          (hash_combine(seed_ ^ kLabelDomain, static_cast<std::uint64_t>(first_key) + static_cast<std::uint64_t>(l)) &
           1) != 0;
      const bool flipped = label_rng.uniform(label_stream) < kLabelNoise;
      batch.labels[static_cast<std::size_t>(s * data_.label_dim + l)] = clicked != flipped ? 1.0f : 0.0f;
    }
  }
  return batch;
}

}  // namespace embscale::workloads
