#include "workloads/trace_stats.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "workloads/trace_oracles.hpp"
#include "workloads/trace_stats_report.hpp"

namespace embscale::workloads {
namespace {

using testing::brute_force_reuse_distances;
using testing::count_keys;
using testing::random_stream;

// A batch from bags given sample-major: bags[sample * slots + slot].
Batch make_batch(std::int32_t slots, const std::vector<std::vector<Key>>& bags) {
  Batch batch;
  batch.num_slots = slots;
  batch.num_samples = static_cast<std::int64_t>(bags.size()) / slots;
  for (const auto& bag : bags) {
    batch.keys.insert(batch.keys.end(), bag.begin(), bag.end());
    batch.offsets.push_back(static_cast<std::int64_t>(batch.keys.size()));
  }
  return batch;
}

// Top shares by brute force: counts sorted hottest first, the top ceil(x * distinct) keys, at
// least 1, computed with the rational x = per_mille / 1000 by a loop (no shared helper).
std::vector<double> brute_top_shares(const std::map<Key, std::int64_t>& counts) {
  std::vector<std::int64_t> sorted;
  std::int64_t total = 0;
  for (const auto& [key, count] : counts) sorted.push_back(count), total += count;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  std::vector<double> shares;
  for (const std::int64_t per_mille : kTopPerMille) {
    std::int64_t keys = 1;
    while (keys * 1000 < static_cast<std::int64_t>(sorted.size()) * per_mille) ++keys;  // smallest keys >= m x
    std::int64_t hot = 0;
    for (std::int64_t i = 0; i < keys; ++i) hot += sorted[static_cast<std::size_t>(i)];
    shares.push_back(static_cast<double>(hot) / static_cast<double>(total));
  }
  return shares;
}

TEST(TraceStats, HandmadeBatches) {
  // Two slots; slot 0 keys 0..9, slot 1 keys 100..109. Two batches of two samples.
  TraceStatsCollector collector;
  collector.add(make_batch(2, {{1, 1, 2}, {100}, {1}, {}}));
  collector.add(make_batch(2, {{3}, {100, 101, 100}, {1, 2}, {102}}));
  const TraceStats stats = collector.finish();
  ASSERT_EQ(stats.slots.size(), 2u);
  const KeyStats& s0 = stats.slots[0];
  const KeyStats& s1 = stats.slots[1];
  EXPECT_EQ(s0.records, 4);
  EXPECT_EQ(s0.accesses, 7);     // 1 1 2 | 1 | 3 | 1 2
  EXPECT_EQ(s0.unique_keys, 3);  // 1 x4, 2 x2, 3 x1
  EXPECT_EQ(s0.bag_nnz_min, 1);
  EXPECT_EQ(s0.bag_nnz_max, 3);
  EXPECT_DOUBLE_EQ(s0.bag_nnz_mean, 7.0 / 4.0);
  EXPECT_EQ(s0.top_keys[2], 1);  // ceil(0.1 * 3) = 1
  EXPECT_DOUBLE_EQ(s0.top_share[2], 4.0 / 7.0);
  EXPECT_EQ(s1.accesses, 5);  // 100 | - | 100 101 100 | 102
  EXPECT_EQ(s1.unique_keys, 3);
  EXPECT_EQ(s1.bag_nnz_min, 0);
  EXPECT_EQ(s1.bag_nnz_max, 3);
  EXPECT_DOUBLE_EQ(s1.top_share[0], 3.0 / 5.0);
  EXPECT_EQ(stats.total.records, 4);
  EXPECT_EQ(stats.total.accesses, 12);
  EXPECT_EQ(stats.total.unique_keys, 6);
  EXPECT_EQ(stats.total.bags, 8);
  EXPECT_EQ(stats.total.bag_nnz_min, 0);
  EXPECT_EQ(stats.total.bag_nnz_max, 3);
  EXPECT_DOUBLE_EQ(stats.total.top_share[0], 4.0 / 12.0);  // key 1
  ASSERT_TRUE(stats.reuse.has_value());
  EXPECT_EQ(stats.reuse->cold, 6);
  EXPECT_EQ(stats.reuse->accesses, 12);
}

// Random multi-slot batches against std::map counts, brute-force top shares and the quadratic
// reuse oracle over the flattened stream.
TEST(TraceStats, RandomBatchesMatchBruteForce) {
  constexpr std::int32_t kSlots = 3;
  const std::int64_t slot_keys[kSlots] = {50, 2000, 7};
  const double exponents[kSlots] = {1.1, 0.0, 0.5};
  TraceStatsCollector collector;
  std::vector<Key> stream;
  std::vector<std::map<Key, std::int64_t>> slot_counts(kSlots);
  std::vector<std::int64_t> nnz_min(kSlots, 1 << 30), nnz_max(kSlots, 0);
  std::uint64_t seed = 1000;
  for (int b = 0; b < 5; ++b) {
    std::vector<std::vector<Key>> bags;
    for (int sample = 0; sample < 40; ++sample)
      for (std::int32_t slot = 0; slot < kSlots; ++slot) {
        const auto nnz = static_cast<std::int64_t>((seed * 7 + static_cast<std::uint64_t>(slot)) % 5);  // 0..4
        auto bag = random_stream(nnz, slot_keys[slot], exponents[slot], ++seed);
        for (Key& key : bag) key += 10000 * slot;  // unified encoding
        for (const Key key : bag) ++slot_counts[static_cast<std::size_t>(slot)][key];
        nnz_min[static_cast<std::size_t>(slot)] = std::min(nnz_min[static_cast<std::size_t>(slot)], nnz);
        nnz_max[static_cast<std::size_t>(slot)] = std::max(nnz_max[static_cast<std::size_t>(slot)], nnz);
        stream.insert(stream.end(), bag.begin(), bag.end());
        bags.push_back(std::move(bag));
      }
    collector.add(make_batch(kSlots, bags));
  }
  const TraceStats stats = collector.finish();
  std::int64_t total_accesses = 0;
  for (std::int32_t slot = 0; slot < kSlots; ++slot) {
    const auto j = static_cast<std::size_t>(slot);
    std::int64_t accesses = 0;
    for (const auto& [key, count] : slot_counts[j]) accesses += count;
    total_accesses += accesses;
    EXPECT_EQ(stats.slots[j].records, 200);
    EXPECT_EQ(stats.slots[j].accesses, accesses);
    EXPECT_EQ(stats.slots[j].unique_keys, static_cast<std::int64_t>(slot_counts[j].size()));
    EXPECT_EQ(stats.slots[j].bag_nnz_min, nnz_min[j]);
    EXPECT_EQ(stats.slots[j].bag_nnz_max, nnz_max[j]);
    EXPECT_DOUBLE_EQ(stats.slots[j].bag_nnz_mean, static_cast<double>(accesses) / 200.0);
    const auto shares = brute_top_shares(slot_counts[j]);
    for (std::size_t i = 0; i < shares.size(); ++i)
      EXPECT_DOUBLE_EQ(stats.slots[j].top_share[i], shares[i]) << "slot " << slot;
    EXPECT_EQ(stats.slots[j].zipf.ranks, stats.slots[j].unique_keys);
  }
  const auto all_counts = count_keys(stream);
  EXPECT_EQ(stats.total.accesses, total_accesses);
  EXPECT_EQ(stats.total.unique_keys, static_cast<std::int64_t>(all_counts.size()));
  const auto shares = brute_top_shares(all_counts);
  for (std::size_t i = 0; i < shares.size(); ++i) EXPECT_DOUBLE_EQ(stats.total.top_share[i], shares[i]);

  // Reuse over the flattened stream: the collector's ids are not the keys, distances must agree.
  auto distances = brute_force_reuse_distances(stream);
  ASSERT_TRUE(stats.reuse.has_value());
  EXPECT_EQ(stats.reuse->cold, std::count(distances.begin(), distances.end(), testing::kColdDistance));
  std::erase(distances, testing::kColdDistance);
  std::sort(distances.begin(), distances.end());
  const auto rank = [&](std::int64_t percent) {
    return distances[static_cast<std::size_t>((static_cast<std::int64_t>(distances.size()) * percent + 99) / 100 - 1)];
  };
  EXPECT_EQ(stats.reuse->median, rank(50));
  EXPECT_EQ(stats.reuse->p90, rank(90));
  EXPECT_EQ(stats.reuse->p99, rank(99));
}

TEST(TraceStats, SlotSizeArraySetsTheZipfRanks) {
  TraceStatsOptions options;
  options.slot_size_array = {10, 1000};
  options.reuse_distances = false;
  TraceStatsCollector collector(options);
  collector.add(make_batch(2, {{1, 2, 1}, {500, 501}, {1, 3}, {500}}));
  const TraceStats stats = collector.finish();
  EXPECT_EQ(stats.slots[0].zipf.ranks, 10);
  EXPECT_EQ(stats.slots[1].zipf.ranks, 1000);
  EXPECT_EQ(stats.total.zipf.ranks, 1010);
  EXPECT_FALSE(stats.reuse.has_value());
  // The fit is the one of the slot's sorted counts over the given ranks.
  EXPECT_DOUBLE_EQ(stats.slots[0].zipf.exponent, fit_zipf(std::vector<std::int64_t>{3, 1, 1}, 10).exponent);
}

TEST(TraceStats, RejectsInconsistentTraces) {
  {
    TraceStatsCollector collector;
    EXPECT_THROW(collector.add(make_batch(2, {{1}, {1}})), InputError);  // key 1 in slots 0 and 1
  }
  {
    TraceStatsCollector collector;
    collector.add(make_batch(2, {{1}, {2}}));
    EXPECT_THROW(collector.add(make_batch(3, {{1}, {2}, {3}})), InputError);
  }
  {
    TraceStatsOptions options;
    options.slot_size_array = {5};
    TraceStatsCollector collector(options);
    EXPECT_THROW(collector.add(make_batch(2, {{1}, {2}})), InputError);  // two slots, one size
  }
  {
    TraceStatsOptions options;
    options.slot_size_array = {2};
    TraceStatsCollector collector(options);
    collector.add(make_batch(1, {{1, 2, 3}}));
    EXPECT_THROW(collector.finish(), InputError);  // three distinct keys in a slot of two
  }
  EXPECT_THROW(TraceStatsCollector(TraceStatsOptions{{0}, true}), InputError);
  Batch broken = make_batch(1, {{1, 2}});
  broken.offsets.back() = 5;
  EXPECT_THROW(TraceStatsCollector{}.add(broken), Error);
}

TEST(TraceStats, EmptyCollectorFinishes) {
  const TraceStats stats = TraceStatsCollector{}.finish();
  EXPECT_TRUE(stats.slots.empty());
  EXPECT_EQ(stats.total.accesses, 0);
  EXPECT_TRUE(std::isnan(stats.total.zipf.exponent));
  EXPECT_FALSE(format_trace_stats(stats).empty());
}

TEST(TraceStats, ReportCarriesEveryFigure) {
  TraceStatsCollector collector;
  collector.add(make_batch(2, {{1, 1, 2}, {100}, {1, 3}, {100, 101}}));
  const TraceStats stats = collector.finish();

  const nlohmann::json json = trace_stats_json(stats);
  ASSERT_EQ(json["slots"].size(), 2u);
  EXPECT_EQ(json["slots"][0]["accesses"], stats.slots[0].accesses);
  EXPECT_EQ(json["slots"][1]["unique_keys"], stats.slots[1].unique_keys);
  EXPECT_EQ(json["total"]["bag_nnz_max"], 3);
  EXPECT_EQ(json["total"]["top"][1]["per_mille"], 10);
  EXPECT_DOUBLE_EQ(json["total"]["top"][1]["share"].get<double>(), stats.total.top_share[1]);
  EXPECT_DOUBLE_EQ(json["slots"][0]["zipf"]["exponent"].get<double>(), stats.slots[0].zipf.exponent);
  EXPECT_EQ(json["reuse"]["cold"], stats.reuse->cold);
  EXPECT_EQ(json["reuse"]["lru_curve"].size(), stats.reuse->lru_curve.size());
  // An unfitted exponent (a single key) is null in the document, not a NaN number.
  TraceStatsCollector single;
  single.add(make_batch(1, {{7, 7}}));
  EXPECT_TRUE(trace_stats_json(single.finish())["total"]["zipf"]["exponent"].is_null());

  // Text: a legend naming every column, the header, a line per slot and "all", all table lines
  // starting in column 0 with the slot name, a footnote on what "all" pools; the reuse block follows.
  const std::string text = format_trace_stats(stats);
  std::vector<std::string> lines;
  for (std::size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1)
    lines.push_back(text.substr(at, end - at));
  const auto header_at =
      std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.rfind("slot", 0) == 0; });
  ASSERT_NE(header_at, lines.end()) << text;
  ASSERT_GE(lines.end() - header_at, 5) << text;
  const std::string legend = text.substr(0, text.find(*header_at));
  const std::string& header = header_at[0];
  EXPECT_EQ(header_at[1].rfind("0 ", 0), 0u);
  EXPECT_EQ(header_at[2].rfind("1 ", 0), 0u);
  EXPECT_EQ(header_at[3].rfind("all ", 0), 0u);
  // Every column the header names is said in the legend (the pooled row in the footnote).
  const std::vector<std::pair<std::string, std::string>> columns{
      // as in the header, as in the legend
      {"records", "records"}, {"keys", "keys"}, {"unique", "unique"}, {"nnz mean", "nnz"}, {"top 1%", "top x%"},
      {"zipf s", "zipf s"},   {"s.e.", "s.e."}, {"fit n", "fit n"},   {"fit KS", "fit KS"}};
  for (const auto& [column, explained] : columns) {
    EXPECT_NE(header.find(column), std::string::npos) << column << ": " << header;
    EXPECT_NE(legend.find(explained + ": "), std::string::npos) << explained << " unexplained:\n" << legend;
  }
  EXPECT_NE(legend.find("fit n: the key space the fit ranks over"), std::string::npos) << legend;
  EXPECT_EQ(header_at[4].rfind("  all: top x% and zipf s are of every slot's keys ranked together", 0), 0u) << text;
  // Right-aligned numeric columns: the "keys" header ends where every keys value ends.
  const auto keys_end = header.find("keys") + 4;
  for (std::size_t row = 1; row <= 3; ++row) {
    EXPECT_EQ(header_at[row][keys_end], ' ') << header_at[row];
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(header_at[row][keys_end - 1]))) << header_at[row];
  }
  EXPECT_NE(header_at[3].find(" " + std::to_string(stats.total.accesses) + " "), std::string::npos) << header_at[3];
  // "fit n" of the pooled row is the distinct keys of both slots (no slot_size_array given).
  const std::string before_fit_n_end = header_at[3].substr(0, header.find("fit n") + 5);
  EXPECT_EQ(before_fit_n_end.substr(before_fit_n_end.find_last_of(' ') + 1), std::to_string(stats.total.unique_keys))
      << header_at[3];
  EXPECT_NE(text.find("reuse distances"), std::string::npos);
  EXPECT_NE(text.find("hit ratio"), std::string::npos);
}

}  // namespace
}  // namespace embscale::workloads
