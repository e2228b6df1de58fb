// What the parameter server's MPI tests share: the workload's shape (three slots of Zipf keys,
// the reference model's table seed) and the role splits a world runs.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/message_channel.hpp"
#include "core/batch.hpp"
#include "embedding/engine_test_support.hpp"

namespace embscale::ps::testing {

inline constexpr std::int64_t kSteps = 6, kBatch = 24;
inline constexpr comm::ChannelTransport kTransports[] = {comm::ChannelTransport::kMpi, comm::ChannelTransport::kUcx};
inline constexpr std::uint64_t kTableSeed = 4321;
inline const std::vector<std::int64_t> kSlotSizes = {40, 9, 300};
inline const std::vector<Key> kSlotOffsets = {0, 40, 49};
inline constexpr std::int64_t kVocabulary = 349;  // the slots' ids

// The workload (the slots above, 3 Zipf 1.05 keys a slot, kBatch samples, kSteps steps) with one
// layer of `optimizer` and `combiner` on dynamic or static storage.
inline config::Config ps_test_config(const config::Optimizer& optimizer, config::Combiner combiner, bool dynamic) {
  config::SlotWorkload slot;
  slot.keys.distribution = config::KeyDistribution::kZipf;
  slot.keys.zipf_alpha = 1.05;
  slot.nnz = 3;
  config::Config cfg = embedding::testing::synthetic_config(kSlotSizes, slot, kBatch, kSteps, 1234);
  config::EmbeddingLayer layer = embedding::testing::scheme_layer("distributed_slot");
  layer.optimizer = optimizer;
  layer.combiner = combiner;
  layer.storage.dynamic = dynamic;
  cfg.embeddings.push_back(layer);
  return cfg;
}

// Trainers are the first ranks, servers the rest.
struct Roles {
  int trainers, servers;
};

// The splits a world of this size runs: 1 + 1 on 2 ranks; 2 + 2 and 3 + 1 on 4; nothing else.
inline std::vector<Roles> role_splits(int world) {
  if (world == 2) return {{1, 1}};
  if (world == 4) return {{2, 2}, {3, 1}};
  return {};
}

}  // namespace embscale::ps::testing
