// Zipf samplers: embscale's rejection-inversion sampler against the baselines a user
// knows, in one binary and run, with the same uniform source (Philox draws through RngCursor):
//   * embscale: ZipfSampler::fill, the batch path the generators take (first candidates in SIMD
//     lanes at the widest level this CPU runs, or EMBSCALE_SIMD's; the same ranks as one call
//     per sample);
//   * embscale_scalar: one ZipfSampler call per sample;
//   * ycsb: YCSB's ZipfianGenerator (Gray et al., "Quickly generating billion-record synthetic
//     databases", SIGMOD 1994): O(n) set-up (the zeta sum), O(1) samples, exact only for the two
//     hottest ranks; undefined at s = 1 (its alpha = 1 / (1 - s)), so no s = 1 pair.
//   * discrete: std::discrete_distribution over the exact weights k^-s: O(n) set-up and memory.
// Names: zipf/<implementation>/n:<N>/s:<exponent> (items_per_second: samples per second, one
// core) and zipf_setup/<implementation>/n:<N>/s:<exponent> (one set-up per iteration).
//
// Run: build/bench/micro/embscale_micro_zipf --benchmark_repetitions=3 --benchmark_display_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "core/rng.hpp"
#include "workloads/zipf_sampler.hpp"

namespace {

using embscale::CounterRng;
using embscale::RngCursor;
using embscale::workloads::ZipfSampler;

// YCSB's ZipfianGenerator over ranks 1..n (YCSB returns 0-based items; +1 here so all three
// implementations draw the same ranks).
class YcsbZipf {
 public:
  YcsbZipf(std::int64_t n, double theta) : n_(static_cast<double>(n)), theta_(theta) {
    double zeta_n = 0;
    for (std::int64_t i = 1; i <= n; ++i) zeta_n += 1.0 / std::pow(static_cast<double>(i), theta);
    const double zeta_2 = 1.0 + std::pow(0.5, theta);
    zeta_n_ = zeta_n;
    alpha_ = 1.0 / (1.0 - theta);
    eta_ = (1.0 - std::pow(2.0 / n_, 1.0 - theta)) / (1.0 - zeta_2 / zeta_n);
    half_pow_theta_ = std::pow(0.5, theta);
  }
  std::int64_t operator()(RngCursor& rng) const {
    const double u = rng.uniform();
    const double uz = u * zeta_n_;
    if (uz < 1.0) return 1;
    if (uz < 1.0 + half_pow_theta_) return 2;
    return 1 + static_cast<std::int64_t>(n_ * std::pow(eta_ * u - eta_ + 1.0, alpha_));
  }

 private:
  double n_, theta_, zeta_n_ = 0, alpha_ = 0, eta_ = 0, half_pow_theta_ = 0;
};

// std::discrete_distribution driven by the same Philox draws.
struct CursorBits {
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  RngCursor* cursor;
  result_type operator()() { return cursor->bits64(); }
};

std::discrete_distribution<std::int64_t> discrete_zipf(std::int64_t n, double s) {
  std::vector<double> weights(static_cast<std::size_t>(n));
  for (std::int64_t k = 1; k <= n; ++k) weights[static_cast<std::size_t>(k - 1)] = std::pow(static_cast<double>(k), -s);
  return {weights.begin(), weights.end()};
}

constexpr int kBatch = 4096;  // samples per timed iteration

// ZipfSampler::fill over the same stream, kBatch ranks per iteration.
void fill(benchmark::State& state, const ZipfSampler& sampler) {
  RngCursor rng(CounterRng(42, 0));
  std::vector<std::int64_t> ranks(kBatch);
  std::int64_t sum = 0;
  for (auto _ : state) {
    sampler.fill(rng, ranks);
    for (const auto rank : ranks) sum += rank;
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

template <typename Sampler> void draw(benchmark::State& state, const Sampler& sample) {
  RngCursor rng(CounterRng(42, 0));
  std::int64_t sum = 0;
  for (auto _ : state) {
    for (int i = 0; i < kBatch; ++i) sum += sample(rng);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

void register_all() {
  char name[128];
  const auto add = [&](auto&& body) { return benchmark::RegisterBenchmark(name, body)->Unit(benchmark::kNanosecond); };
  for (const std::int64_t n : {std::int64_t{1'000'000}, std::int64_t{100'000'000}, std::int64_t{100'000'000'000}})
    for (const double s : {0.5, 0.99, 1.0, 1.05, 1.3}) {
      std::snprintf(name, sizeof name, "zipf/embscale/n:%lld/s:%.2f", static_cast<long long>(n), s);
      add([=](benchmark::State& st) { fill(st, ZipfSampler(n, s)); });
      std::snprintf(name, sizeof name, "zipf/embscale_scalar/n:%lld/s:%.2f", static_cast<long long>(n), s);
      add([=](benchmark::State& st) { draw(st, ZipfSampler(n, s)); });
      std::snprintf(name, sizeof name, "zipf_setup/embscale/n:%lld/s:%.2f", static_cast<long long>(n), s);
      add([=](benchmark::State& st) {
        for (auto _ : st) benchmark::DoNotOptimize(ZipfSampler(n, s));
      });
      if (s != 1.0 && n <= 100'000'000) {  // YCSB: no s = 1; its O(n) set-up stops at 10^8
        std::snprintf(name, sizeof name, "zipf/ycsb/n:%lld/s:%.2f", static_cast<long long>(n), s);
        add([=](benchmark::State& st) {
          const YcsbZipf ycsb(n, s);
          draw(st, ycsb);
        });
        std::snprintf(name, sizeof name, "zipf_setup/ycsb/n:%lld/s:%.2f", static_cast<long long>(n), s);
        add([=](benchmark::State& st) {
          for (auto _ : st) benchmark::DoNotOptimize(YcsbZipf(n, s));
        })->Iterations(1);
      }
      if (n == 1'000'000) {
        std::snprintf(name, sizeof name, "zipf/discrete/n:%lld/s:%.2f", static_cast<long long>(n), s);
        add([=](benchmark::State& st) {
          auto dist = discrete_zipf(n, s);
          draw(st, [&](RngCursor& rng) {
            CursorBits bits{&rng};
            return dist(bits) + 1;
          });
        });
        std::snprintf(name, sizeof name, "zipf_setup/discrete/n:%lld/s:%.2f", static_cast<long long>(n), s);
        add([=](benchmark::State& st) {
          for (auto _ : st) benchmark::DoNotOptimize(discrete_zipf(n, s));
        });
      }
    }
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
