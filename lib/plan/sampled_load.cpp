#include "plan/sampled_load.hpp"

#include <algorithm>

#include "core/batch_source.hpp"
#include "core/error.hpp"
#include "workloads/batch_source_factory.hpp"

namespace embscale::plan {
namespace {

// The ownerships in the order of the tables' second index.
constexpr Ownership kAll[] = {Ownership::kOneRank, Ownership::kRowBlocks, Ownership::kKeyModulo, Ownership::kEveryRank,
                              Ownership::kReplicas};
constexpr std::size_t kOne = 0, kBlocks = 1, kModulo = 2, kEvery = 3, kReplica = 4;

// kHotReplicas and kNodeRowBlocks are not sampled: PlanModel derives them from key modulo's and
// row blocks'.
std::size_t index_of(Ownership ownership) {
  const auto at = std::find(std::begin(kAll), std::end(kAll), ownership);
  EMBSCALE_EXPECTS(at != std::end(kAll), "a sampled ownership");
  return static_cast<std::size_t>(at - std::begin(kAll));
}

}  // namespace

// Sorted (key, requester) occurrences of one slot: per key, its multiplicity goes to the owner's
// pairs and one to its distinct keys under each key-owned ownership; per (key, requester), to
// that replica's.
void LoadSample::count(std::size_t slot, std::vector<Occurrence>& occurrences, Table& distinct, bool count_pairs) {
  std::sort(occurrences.begin(), occurrences.end());
  const std::int64_t block = (sizes_[slot] + ranks_ - 1) / ranks_;
  auto& t = distinct[slot];
  for (std::size_t i = 0; i < occurrences.size();) {
    const Key key = occurrences[i].key;
    std::size_t end = i;
    while (end < occurrences.size() && occurrences[end].key == key) ++end;
    const auto count = static_cast<double>(end - i);
    const auto by_block = static_cast<std::size_t>((key - offsets_[slot]) / block);
    const auto by_modulo = static_cast<std::size_t>(key % ranks_);
    t[kOne][0] += 1.0;
    t[kBlocks][by_block] += 1.0;
    t[kModulo][by_modulo] += 1.0;
    if (count_pairs) {
      pairs_[slot][kOne][0] += count;
      pairs_[slot][kBlocks][by_block] += count;
      pairs_[slot][kModulo][by_modulo] += count;
    }
    for (std::size_t j = i; j < end;) {
      const int requester = occurrences[j].requester;
      std::size_t same = j;
      while (same < end && occurrences[same].requester == requester) ++same;
      t[kReplica][static_cast<std::size_t>(requester)] += 1.0;
      if (count_pairs) pairs_[slot][kReplica][static_cast<std::size_t>(requester)] += static_cast<double>(same - j);
      j = same;
    }
    i = end;
  }
}

LoadSample::LoadSample(const config::Config& config, int ranks, const std::vector<std::int32_t>& slots_counted,
                       bool over_sample, std::int64_t batches)
    : ranks_(ranks) {
  auto source = workloads::make_batch_source(config);
  const std::int64_t global = config.solver.batchsize;
  const std::int64_t warmup = config.solver.warmup_iter;
  const std::int64_t available = source->iterations_available(global);
  const std::int64_t limit = available == BatchSource::kUnbounded ? batches : std::min(batches, available - warmup);
  if (limit < 1)
    throw InputError("the planner measures loads on the data's batches after the warm-up; " + source->describe() +
                     " holds none of " + std::to_string(global) + " samples");
  sizes_ = source->slot_sizes();
  const auto slots = sizes_.size();
  offsets_.assign(1, 0);
  for (const auto size : sizes_) offsets_.push_back(offsets_.back() + size);
  const Table zero(slots, std::vector<std::vector<double>>(std::size(kAll),
                                                           std::vector<double>(static_cast<std::size_t>(ranks), 0.0)));
  pairs_ = distinct_ = distinct_total_ = zero;
  std::vector<bool> counted(slots, false);
  for (const auto slot : slots_counted) counted[static_cast<std::size_t>(slot)] = true;
  std::vector<int> requester(static_cast<std::size_t>(global));
  for (int r = 0; r < ranks; ++r) {
    const auto share = sample_share_of(global, r, ranks);
    std::fill_n(requester.begin() + share.first, share.count, r);
  }
  std::vector<std::vector<Occurrence>> step(slots), all(slots);
  for (std::int64_t w = 1; w <= warmup; ++w) (void)source->next_batch(-w, 0, 1);  // a run's order
  std::int64_t keys_read = 0;
  for (std::int64_t it = 0; it < limit && (it < kMinSampleBatches || keys_read < kSampleKeys); ++it) {
    const Batch batch = source->next_batch(it, 0, 1);
    samples_ += batch.num_samples;
    ++batches_;
    for (auto& s : step) s.clear();
    for (std::int64_t b = 0; b < batch.num_bags(); ++b) {
      const auto slot = static_cast<std::size_t>(b % batch.num_slots);
      if (!counted[slot]) continue;
      const int own = requester[static_cast<std::size_t>(b / batch.num_slots)];
      for (const Key key : batch.bag(b)) step[slot].push_back({key, own});
    }
    for (std::size_t s = 0; s < slots; ++s) {
      if (!counted[s]) continue;
      keys_read += static_cast<std::int64_t>(step[s].size());
      count(s, step[s], distinct_, true);
      if (!over_sample) continue;
      all[s].insert(all[s].end(), step[s].begin(), step[s].end());
      std::sort(all[s].begin(), all[s].end());
      all[s].erase(std::unique(all[s].begin(), all[s].end()), all[s].end());
    }
  }
  const double n = static_cast<double>(batches_);
  for (std::size_t s = 0; s < slots; ++s) {
    if (over_sample && counted[s]) count(s, all[s], distinct_total_, false);
    for (std::size_t o = 0; o < std::size(kAll); ++o) {
      for (auto& v : pairs_[s][o]) v /= n;
      for (auto& v : distinct_[s][o]) v /= n;
    }
    // Every rank gets every key under kEveryRank: kOneRank's counts on each rank.
    for (auto* t : {&pairs_, &distinct_, &distinct_total_})
      (*t)[s][kEvery].assign(static_cast<std::size_t>(ranks), (*t)[s][kOne][0]);
  }
}

std::vector<RankLoad> LoadSample::loads(std::int32_t slot, Ownership ownership) const {
  const auto o = index_of(ownership);
  std::vector<RankLoad> out;
  for (int r = 0; r < ranks_; ++r)
    out.push_back({pairs_[static_cast<std::size_t>(slot)][o][static_cast<std::size_t>(r)],
                   distinct_[static_cast<std::size_t>(slot)][o][static_cast<std::size_t>(r)]});
  return out;
}

double LoadSample::bag_size(std::int32_t slot) const {
  return pairs_[static_cast<std::size_t>(slot)][kOne][0] * static_cast<double>(batches_) /
         static_cast<double>(std::max<std::int64_t>(1, samples_));
}

std::vector<double> LoadSample::distinct_over_sample(std::int32_t slot, Ownership ownership) const {
  return distinct_total_[static_cast<std::size_t>(slot)][index_of(ownership)];
}

}  // namespace embscale::plan
