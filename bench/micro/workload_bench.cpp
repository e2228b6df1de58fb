// Workload generators: samples per second per core of every key distribution, of the
// wrappers around one (drift, id growth, the key permutation) and of whole synthetic batches, with
// the raw Philox draw in the same binary and run as the baseline every figure is a ratio to.
//
//   generator/philox_uniform_double/n:0   CounterRng::uniform through an RngCursor: the floor
//   generator/<registry name>/n:<N>       make_key_sampler(spec, N)->draw(cursor), one virtual call
//                                         per draw; every registry entry at N = 10^6, 10^9 and
//                                         2^63 - 1 (the largest space any sampler takes), with
//                                         representative_spec's parameters
//   generator/<registry name>+draw_each/n:<N>   the same draws through KeySampler::draw_each, 4096
//                                         cursors a call, as the generator makes them (the batch
//                                         path of Zipf and what wraps it; a loop of draw elsewhere)
//   generator/zipf+bags/n:<N>             plain Zipf 1.05 through SlotGenerator::append_bags (bags
//                                         of 4): the baseline of the three below, same path and run
//   generator/zipf+{drift,growth,permutation}/n:<N>   the same bags with one wrapper switched on
//   batch/default/batch:4096              SyntheticGenerator::generate of the embedded default
//                                         config (bench/configs/default.json)
//   batch/rich/batch:4096                 the same over kRichSynthetic (per-slot distributions,
//                                         dedup and distinct bags, uniform nnz, Pareto companions)
//
// items_per_second: keys per second on one core (a draw is one key). The batch benchmarks also
// report samples_per_second. Every benchmark checks what it generated (keys below N or inside
// their slot, bag sizes, no repeats where the config removes them) and reports an error instead of
// a time when a check fails.
//
// Run (README.md, "Workload generators"):
//   build/bench/micro/embscale_micro_workloads --benchmark_min_time=0.3 --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/batch.hpp"
#include "core/rng.hpp"
#include "workloads/key_source.hpp"
#include "workloads/slot_generator.hpp"
#include "workloads/synthetic.hpp"

namespace {

using embscale::CounterRng;
using embscale::Key;
using embscale::RngCursor;
namespace config = embscale::config;
namespace workloads = embscale::workloads;

constexpr std::uint64_t kSeed = 20261122;
constexpr int kDraws = 4096;      // sampler draws per timed iteration
constexpr int kBags = 1024;       // append_bag calls per timed iteration
constexpr std::int64_t kNnz = 4;  // keys per bag of the wrapper benchmarks (the default config's)
constexpr std::int64_t kBatch = 4096;

// The key spaces of the per-distribution benchmarks: a small and a large table, and the largest
// space a KeySpec accepts anywhere (ZipfKeys and FbgemmZipfKeys stop at 2^63 - 1).
constexpr std::uint64_t kSpaces[] = {1'000'000, 1'000'000'000, std::numeric_limits<std::int64_t>::max()};

// Parameters a user would pick for each distribution. No `default`: a distribution added to the
// enum (and so to the registry) must get its parameters here before this file compiles cleanly.
config::KeySpec representative_spec(config::KeyDistribution distribution) {
  using config::KeyDistribution;
  config::KeySpec spec;
  spec.distribution = distribution;
  switch (distribution) {
    case KeyDistribution::kUniform:
    case KeyDistribution::kDlrmUniform:
    case KeyDistribution::kTorchrecUniform: break;  // no parameters
    case KeyDistribution::kZipf: spec.zipf_alpha = 1.05; break;
    case KeyDistribution::kHotspot:
      spec.hot_key_fraction = 0.2;
      spec.hot_access_fraction = 0.8;
      break;
    case KeyDistribution::kMixture: {
      config::KeySpec zipf;
      zipf.distribution = KeyDistribution::kZipf;
      zipf.zipf_alpha = 1.2;
      config::KeySpec uniform;
      uniform.distribution = KeyDistribution::kUniform;
      spec.mixture = {{0.7, zipf}, {0.3, uniform}};
      break;
    }
    case KeyDistribution::kHugeCtrPowerLaw: spec.power_law = config::HugeCtrPowerLaw::kLong; break;
    case KeyDistribution::kFbgemmZipf: spec.zipf_alpha = 1.15; break;
  }
  return spec;
}

// Folds generated keys into a checksum (kept alive with DoNotOptimize, so no draw is elided) and
// remembers whether any fell outside [0, space).
struct KeyCheck {
  std::uint64_t checksum = 0;
  bool out_of_range = false;
  void add(std::uint64_t key, std::uint64_t space) {
    checksum += key;
    out_of_range |= key >= space;
  }
};

void report_keys(benchmark::State& state, const KeyCheck& check, std::int64_t keys) {
  benchmark::DoNotOptimize(check.checksum);
  if (check.out_of_range) state.SkipWithError("a key fell outside [0, N)");
  state.SetItemsProcessed(keys);
}

// --- 1. The raw Philox draw and every registered distribution --------------------------------

void philox_uniform(benchmark::State& state) {
  RngCursor rng(CounterRng(kSeed, 0));
  double sum = 0;
  bool out_of_range = false;
  for (auto _ : state) {
    for (int i = 0; i < kDraws; ++i) {
      const double u = rng.uniform();
      sum += u;
      out_of_range |= !(u >= 0.0 && u < 1.0);
    }
    benchmark::DoNotOptimize(sum);
  }
  const auto draws = state.iterations() * kDraws;
  // The mean of >= 4096 uniforms has a standard deviation below 0.0046: 0.05 is 10 of them.
  const double mean = sum / static_cast<double>(draws);
  if (out_of_range || mean < 0.45 || mean > 0.55) state.SkipWithError("uniform draws outside [0, 1) or biased");
  state.SetItemsProcessed(draws);
}

void sampler_draws(benchmark::State& state, const workloads::KeySampler& sampler) {
  const std::uint64_t n = sampler.space();
  RngCursor rng(CounterRng(kSeed, 0));
  KeyCheck check;
  for (auto _ : state) {
    for (int i = 0; i < kDraws; ++i) check.add(sampler.draw(rng), n);
    benchmark::DoNotOptimize(check.checksum);
  }
  report_keys(state, check, state.iterations() * kDraws);
}

// The same sampler through draw_each, as SlotGenerator::append_bags calls it: kDraws cursors, each
// at its own draw's window of counters (bag streams of kNnz draws), one call per iteration. The
// cursors are rebuilt each iteration (part of what the generator pays).
void sampler_draw_each(benchmark::State& state, const workloads::KeySampler& sampler) {
  const std::uint64_t n = sampler.space();
  std::vector<RngCursor> cursors;
  cursors.reserve(kDraws);
  std::vector<std::uint64_t> indices(kDraws);
  std::uint64_t first_stream = 0;
  KeyCheck check;
  for (auto _ : state) {
    cursors.clear();
    for (int i = 0; i < kDraws; ++i)
      cursors.emplace_back(CounterRng(kSeed, first_stream + static_cast<std::uint64_t>(i / kNnz)),
                           static_cast<std::uint64_t>(i % kNnz) << 20);
    first_stream += kDraws / kNnz;
    sampler.draw_each(cursors, indices);
    for (const std::uint64_t index : indices) check.add(index, n);
    benchmark::DoNotOptimize(check.checksum);
  }
  report_keys(state, check, state.iterations() * kDraws);
}

// --- 2. Wrappers through SlotGenerator::append_bags ------------------------------------------

// The iteration whose sampler the wrapper benchmarks draw from: drift and growth are under way.
constexpr std::int64_t kWrapperIteration = 50;

enum class Wrapper { kNone, kDrift, kGrowth, kPermutation };

config::SlotWorkload wrapper_workload(Wrapper wrapper, std::uint64_t space) {
  config::SlotWorkload w;
  w.keys = representative_spec(config::KeyDistribution::kZipf);
  w.nnz = kNnz;
  switch (wrapper) {
    case Wrapper::kNone: break;
    case Wrapper::kDrift:  // at iteration 50 the hot set has moved 0.05 N: a RotatedKeys
      w.drift = {.period = 100, .mode = config::DriftMode::kGradual, .shift = 0.1};
      break;
    case Wrapper::kGrowth:  // 0.6 N ids exist at iteration 50, the newest hottest: a MirroredKeys
      // (oldest-hot growth is a plain ZipfKeys over fewer ids, no wrapper to measure).
      w.growth = {.keys_per_iteration = static_cast<std::int64_t>(space / 500),
                  .initial_keys = static_cast<std::int64_t>(space / 2),
                  .hot = config::GrowthOrder::kNewestHot};
      break;
    case Wrapper::kPermutation: w.mapping = config::KeyMapping::kPermutation; break;
  }
  return w;
}

// Whether the wrapper is in effect at kWrapperIteration (else the benchmark would time plain Zipf).
bool wrapper_active(Wrapper wrapper, const config::SlotWorkload& w, std::uint64_t space) {
  switch (wrapper) {
    case Wrapper::kNone: return true;
    case Wrapper::kDrift: return workloads::drift_offset(w.drift, space, kWrapperIteration) != 0;
    case Wrapper::kGrowth: return workloads::grown_space(w.growth, space, kWrapperIteration) < space;
    case Wrapper::kPermutation: return w.mapping == config::KeyMapping::kPermutation;
  }
  return false;
}

void append_bags(benchmark::State& state, Wrapper wrapper, std::uint64_t space) {
  const auto workload = wrapper_workload(wrapper, space);
  if (!wrapper_active(wrapper, workload, space)) {
    state.SkipWithError("the wrapper is not in effect at the measured iteration");
    return;
  }
  const workloads::SlotGenerator slot(workload, space, 0, kSeed, 0);
  // Once per batch in SyntheticGenerator, so outside the timed loop here.
  const auto sampler = slot.sampler_at(kWrapperIteration);
  std::vector<Key> keys;
  keys.reserve(static_cast<std::size_t>(kBags * kNnz));
  std::uint64_t bag_stream = 0;
  std::vector<std::uint64_t> streams;
  std::vector<std::int64_t> sizes;
  KeyCheck check;
  bool short_bag = false;
  for (auto _ : state) {
    keys.clear();
    streams.clear();
    for (int b = 0; b < kBags; ++b) streams.push_back(bag_stream++);
    sizes.clear();
    slot.append_bags(*sampler, streams, keys, sizes);
    short_bag |= keys.size() != static_cast<std::size_t>(kBags * kNnz);
    for (const Key k : keys) check.add(static_cast<std::uint64_t>(k), space);  // a negative key wraps above
  }
  if (short_bag) state.SkipWithError("a bag did not hold nnz keys");
  report_keys(state, check, state.iterations() * kBags * kNnz);
}

// --- 3. Whole batches ---------------------------------------------------------------------------

config::DataLayer default_data_layer() { return config::default_config().data; }

// Every slot drawn differently: a mixture by default, Zipf with MLPerf's Pareto companions, HugeCTR's
// short power law with companions, a permuted hotspot and FBGEMM's Zipf in distinct bags; repeats
// removed, bag sizes uniform in [1, nnz] except where a slot fixes them; tables of 10^3 to 10^8.
constexpr const char* kRichSynthetic = R"({
  "key_distribution": "mixture",
  "mixture": [{"weight": 0.7, "key_distribution": "zipf", "zipf_alpha": 1.2},
              {"weight": 0.3, "key_distribution": "uniform"}],
  "nnz_per_slot": [1, 4, 8, 16, 3, 20, 10, 2],
  "nnz_distribution": "uniform",
  "bag_keys": "dedup",
  "per_slot": {
    "2": {"key_distribution": "zipf", "zipf_alpha": 1.05, "multi_hot": {"companions": "pareto", "pareto_alpha": 0.25}},
    "5": {"key_distribution": "hugectr_power_law", "power_law": "short", "nnz_distribution": "fixed",
          "multi_hot": {"companions": "pareto"}},
    "6": {"key_distribution": "hotspot", "key_mapping": "permutation"},
    "7": {"key_distribution": "fbgemm_zipf", "zipf_alpha": 1.15, "nnz_distribution": "fixed", "bag_keys": "distinct"}
  }
})";
const std::vector<std::int64_t> kRichSlotSizes = {1'000,  100'000,     1'000'000, 10'000'000,
                                                  10'000, 100'000'000, 1'000'000, 100'000};

// The embedded default with the Data layer's synthetic block and slot sizes replaced: parsed and
// validated as a user's file would be.
config::DataLayer rich_data_layer() {
  auto json = nlohmann::json::parse(config::default_config_text());
  auto& data = json["layers"][0];
  data["slot_size_array"] = kRichSlotSizes;
  data["sparse"][0]["slot_num"] = kRichSlotSizes.size();
  data["synthetic"] = nlohmann::json::parse(kRichSynthetic);
  return config::parse_config(json, "<workload_bench rich config>").data;
}

// What is wrong with `batch` under `data`, or an empty string: the shape, every key inside its
// slot's range, every bag within its slot's nnz, and no repeats in bags that remove them.
std::string batch_error(const config::DataLayer& data, const workloads::SyntheticGenerator& generator,
                        const embscale::Batch& batch) {
  if (batch.num_samples != kBatch || batch.num_slots != data.slot_num ||
      batch.offsets.size() != static_cast<std::size_t>(batch.num_bags() + 1) ||
      batch.offsets.back() != static_cast<std::int64_t>(batch.keys.size()) ||
      batch.dense.size() != static_cast<std::size_t>(kBatch * data.dense_dim))
    return "the batch's shape does not match the config";
  for (std::int64_t b = 0; b < batch.num_bags(); ++b) {
    const auto slot = static_cast<std::int32_t>(b % data.slot_num);
    const auto& workload = data.synthetic.slots[static_cast<std::size_t>(slot)];
    const auto bag = batch.bag(b);
    const Key low = generator.slot_offset(slot);
    const Key high = generator.slot_offset(slot + 1);
    if (static_cast<std::int64_t>(bag.size()) > workload.nnz) return "a bag holds more than its slot's nnz";
    // Fixed sizes hold exactly nnz keys unless repeats were dropped (distinct bags redraw them;
    // every rich slot's space is far above its nnz).
    if (workload.nnz_distribution == config::NnzDistribution::kFixed && workload.bag_keys != config::BagKeys::kDedup &&
        static_cast<std::int64_t>(bag.size()) != workload.nnz)
      return "a fixed-size bag does not hold nnz keys";
    for (std::size_t i = 0; i < bag.size(); ++i) {
      if (bag[i] < low || bag[i] >= high) return "a key fell outside its slot";
      if (workload.bag_keys != config::BagKeys::kAny &&
          std::find(bag.begin(), bag.begin() + i, bag[i]) != bag.begin() + i)
        return "a bag that removes repeats holds one";
    }
  }
  return {};
}

// `make_data` builds the Data layer (parsing a config): a config refused shows as the error.
void generate_batches(benchmark::State& state, config::DataLayer (*make_data)()) {
  config::DataLayer data;
  try {
    data = make_data();
  } catch (const std::exception& e) {
    state.SkipWithError(("the config was refused: " + std::string(e.what())).c_str());
    return;
  }
  const workloads::SyntheticGenerator generator(data, kSeed, kBatch);
  std::int64_t keys = 0;
  std::int64_t iteration = 0;
  for (auto _ : state) {
    const auto batch = generator.generate(iteration++, 0, 1);
    state.PauseTiming();  // the check reads every key: not the generator's cost
    keys += static_cast<std::int64_t>(batch.keys.size());
    const std::string error = batch_error(data, generator, batch);
    state.ResumeTiming();
    if (!error.empty()) {
      state.SkipWithError(error.c_str());
      return;
    }
  }
  state.SetItemsProcessed(keys);
  state.counters["samples_per_second"] =
      benchmark::Counter(static_cast<double>(state.iterations() * kBatch), benchmark::Counter::kIsRate);
  state.counters["keys_per_batch"] = static_cast<double>(keys) / static_cast<double>(state.iterations());
}

// --- Registration ---------------------------------------------------------------------------

std::string space_name(std::uint64_t n) { return "n:" + std::to_string(n); }

void register_all() {
  const auto add = [](const std::string& name, auto&& body) {
    benchmark::RegisterBenchmark(name.c_str(), body)->Unit(benchmark::kNanosecond);
  };
  add("generator/philox_uniform_double/n:0", philox_uniform);

  for (const auto& entry : workloads::key_distribution_registry())
    for (const std::uint64_t n : kSpaces) {
      const std::string name = "generator/" + std::string(entry.name) + "/" + space_name(n);
      // Built once at registration (set-up is O(1) in N for every sampler): a space a sampler
      // refuses shows as that benchmark's error, not as a missing row.
      workloads::SharedSampler sampler;
      std::string refused;
      try {
        sampler = workloads::make_key_sampler(representative_spec(entry.id), n);
      } catch (const std::exception& e) {
        refused = e.what();
      }
      for (const bool each : {false, true}) {
        const std::string named = each ? "generator/" + std::string(entry.name) + "+draw_each/" + space_name(n) : name;
        add(named, [sampler, refused, each](benchmark::State& state) {
          if (!sampler) {
            state.SkipWithError(("the sampler refused the space: " + refused).c_str());
            return;
          }
          each ? sampler_draw_each(state, *sampler) : sampler_draws(state, *sampler);
        });
      }
    }

  constexpr std::pair<Wrapper, const char*> kWrappers[] = {{Wrapper::kNone, "zipf+bags"},
                                                           {Wrapper::kDrift, "zipf+drift"},
                                                           {Wrapper::kGrowth, "zipf+growth"},
                                                           {Wrapper::kPermutation, "zipf+permutation"}};
  for (const auto& [wrapper, wrapper_name] : kWrappers)
    for (const std::uint64_t n : kSpaces)
      add("generator/" + std::string(wrapper_name) + "/" + space_name(n),
          [wrapper, n](benchmark::State& state) { append_bags(state, wrapper, n); });

  const std::string batch = "/batch:" + std::to_string(kBatch);
  add("batch/default" + batch, [](benchmark::State& state) { generate_batches(state, default_data_layer); });
  add("batch/rich" + batch, [](benchmark::State& state) { generate_batches(state, rich_data_layer); });
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
