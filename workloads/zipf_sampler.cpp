#include "workloads/zipf_sampler.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/error.hpp"

namespace embscale::workloads {
namespace {

// expm1(x) / x, accurate near 0.
double expm1_over_x(double x) {
  if (std::abs(x) > 1e-8) return std::expm1(x) / x;
  return 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x));
}

// Ranks from 2^53 on are not all doubles: a draw x there stands for the integers of its ulp cell.
constexpr double kExactRanks = 0x1.0p53;

}  // namespace

ZipfSampler::ZipfSampler(std::int64_t n, double exponent)
    : n_(n), n_as_double_(static_cast<double>(n)), s_(exponent), one_minus_s_(1.0 - exponent), inverse_one_minus_s_(1.0 / (1.0 - exponent)) {
  EMBSCALE_EXPECTS(n >= 1, "Zipf needs at least one rank");
  EMBSCALE_EXPECTS(exponent >= 0.0 && std::isfinite(exponent), "Zipf exponent must be finite and >= 0");
  h_integral_x1_ = H(1.5) - 1.0;
  h_integral_n_ = H(static_cast<double>(n) + 0.5);
  accept_threshold_ = 2.0 - H_inverse(H(2.5) - h(2.0));
}

double ZipfSampler::H(double x) const {
  const double log_x = std::log(x);
  return expm1_over_x(one_minus_s_ * log_x) * log_x;
}

double ZipfSampler::h(double x) const { return std::exp(-s_ * std::log(x)); }

double ZipfSampler::hat_area(double from, double to) const {
  // from^(1-s) L E((1-s) L) with L = ln(to/from) from the difference: exact for short intervals.
  const double log_ratio = std::log1p((to - from) / from);
  return std::exp(one_minus_s_ * std::log(from)) * log_ratio * expm1_over_x(one_minus_s_ * log_ratio);
}

bool ZipfSampler::accepted(const Candidate& c) const {
  // Under the bar of k: u >= H(k + 1/2) - h(k), i.e. the hat's area between x and k + 1/2 is
  // at most h(k). Taken as that area, not as a difference of H values: at large k, h(k) is
  // below the rounding of H (near 10^-6 at n = 2^63, s = 1/2) and the difference is noise.
  return c.rank - c.x <= accept_threshold_ || hat_area(c.x, c.rank + 0.5) <= h(c.rank);
}

std::int64_t ZipfSampler::accepted_rank(double rank, RngCursor& rng) const {
  // rank >= double(n) only where it was clamped to n (double(n) may exceed n: no cast there).
  const std::int64_t k = rank >= n_as_double_ ? n_ : static_cast<std::int64_t>(rank);
  if (rank < kExactRanks) return k;
  // Beyond 2^53, x and k are multiples of the spacing of doubles there (2 .. 1024): spread the
  // accepted mass of k uniformly over the integers of its cell [k - spacing/2, k + spacing/2).
  // The pmf varies by a factor (1 + spacing/k)^-s ~ 1 - s 2^-52 across a cell, so this is exact
  // to double precision; cells tile the integers except at the binade edges (powers of two),
  // and ranks past n fold back onto n (at most half a cell of mass, < 2^-52 of the total).
  const auto spacing = static_cast<std::int64_t>(std::nextafter(rank, INFINITY) - rank);
  const std::int64_t low = k - spacing / 2;  // > 2^52: no underflow
  const auto offset = static_cast<std::int64_t>(rng.bits64() % static_cast<std::uint64_t>(spacing));
  return offset > n_ - low ? n_ : low + offset;  // low + offset <= n, without overflowing int64
}

std::int64_t ZipfSampler::finish(const Candidate& c, RngCursor& rng) const {
  return accepted(c) ? accepted_rank(c.rank, rng) : (*this)(rng);
}

std::int64_t ZipfSampler::operator()(RngCursor& rng) const {
  for (;;) {
    const Candidate c = candidate(rng.uniform());
    if (accepted(c)) return accepted_rank(c.rank, rng);
  }
}

// ---- batches ---------------------------------------------------------------------------------

namespace {

// Lanes per pass: enough for SIMD and the pipelines, small enough to stay in L1.
constexpr std::size_t kLanes = 256;

// The first candidate of lane i's draw: Philox at (seeds[i], streams[i], counters[i]), its
// uniform, the hat's point and rank. Pure per lane and branch-free, so GCC vectorizes the loop;
// compiled once per SIMD level (the same bits from each: no FMA contraction, IEEE operations).
[[gnu::always_inline]] inline void first_candidates_loop(const ZipfSampler& shared, const std::uint64_t* seeds,
                                                         const std::uint64_t* streams, const std::uint64_t* counters,
                                                         std::size_t lanes, double* __restrict xs,
                                                         double* __restrict ranks) {
  const ZipfSampler sampler = shared;  // a local copy: the stores below cannot alias its fields
  for (std::size_t i = 0; i < lanes; ++i) {
    const double uniform = CounterRng::unit_interval(CounterRng(seeds[i], streams[i]).bits64(counters[i]));
    const ZipfSampler::Candidate c = sampler.candidate(uniform);
    xs[i] = c.x;
    ranks[i] = c.rank;
  }
}

using FirstCandidates = void (*)(const ZipfSampler&, const std::uint64_t*, const std::uint64_t*,
                                 const std::uint64_t*, std::size_t, double*, double*);

void first_candidates_baseline(const ZipfSampler& sampler, const std::uint64_t* seeds, const std::uint64_t* streams,
                               const std::uint64_t* counters, std::size_t lanes, double* xs, double* ranks) {
  first_candidates_loop(sampler, seeds, streams, counters, lanes, xs, ranks);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
[[gnu::target("arch=x86-64-v3")]] void first_candidates_avx2(const ZipfSampler& sampler, const std::uint64_t* seeds,
                                                             const std::uint64_t* streams, const std::uint64_t* counters,
                                                             std::size_t lanes, double* xs, double* ranks) {
  first_candidates_loop(sampler, seeds, streams, counters, lanes, xs, ranks);
}
[[gnu::target("arch=x86-64-v4")]] void first_candidates_avx512(const ZipfSampler& sampler, const std::uint64_t* seeds,
                                                               const std::uint64_t* streams, const std::uint64_t* counters,
                                                               std::size_t lanes, double* xs, double* ranks) {
  first_candidates_loop(sampler, seeds, streams, counters, lanes, xs, ranks);
}
#else
constexpr FirstCandidates first_candidates_avx2 = first_candidates_baseline;
constexpr FirstCandidates first_candidates_avx512 = first_candidates_baseline;
#endif

FirstCandidates first_candidates_for(SimdLevel level) {
  EMBSCALE_EXPECTS(cpu_runs(level), "the Zipf sampler was asked for a SIMD level this CPU cannot run");
  switch (level) {
    case SimdLevel::kAvx512: return first_candidates_avx512;
    case SimdLevel::kAvx2: return first_candidates_avx2;
    case SimdLevel::kBaseline: break;
  }
  return first_candidates_baseline;
}

// One pass's lanes, structure of arrays.
struct LaneBlock {
  std::array<std::uint64_t, kLanes> seeds, streams, counters;
  std::array<double, kLanes> xs, ranks;

  void compute(FirstCandidates kernel, const ZipfSampler& sampler, std::size_t lanes) {
    kernel(sampler, seeds.data(), streams.data(), counters.data(), lanes, xs.data(), ranks.data());
  }
};

}  // namespace

void ZipfSampler::draw_each(std::span<RngCursor> cursors, std::span<std::int64_t> ranks, SimdLevel level) const {
  EMBSCALE_EXPECTS(cursors.size() == ranks.size(), "draw_each needs one rank per cursor");
  const FirstCandidates kernel = first_candidates_for(level);
  LaneBlock block;
  for (std::size_t first = 0; first < cursors.size(); first += kLanes) {
    const std::size_t lanes = std::min(kLanes, cursors.size() - first);
    for (std::size_t i = 0; i < lanes; ++i) {
      const RngCursor& cursor = cursors[first + i];
      block.seeds[i] = cursor.rng().seed();
      block.streams[i] = cursor.rng().stream();
      block.counters[i] = cursor.counter();
    }
    block.compute(kernel, *this, lanes);
    for (std::size_t i = 0; i < lanes; ++i) {
      RngCursor& cursor = cursors[first + i];
      cursor = RngCursor(cursor.rng(), block.counters[i] + 1);  // past the first draw
      const Candidate c{block.xs[i], block.ranks[i]};
      ranks[first + i] = finish(c, cursor);
    }
  }
}

void ZipfSampler::fill(RngCursor& rng, std::span<std::int64_t> ranks, SimdLevel level) const {
  const FirstCandidates kernel = first_candidates_for(level);
  LaneBlock block;
  block.seeds.fill(rng.rng().seed());
  block.streams.fill(rng.rng().stream());
  std::size_t done = 0;
  while (done < ranks.size()) {
    // Lane i is the draw at counter base + i; a rejection consumes later counters, whose lanes
    // are then skipped. About 1 in 10..20 draws is rejected: a little slack saves a pass.
    const std::uint64_t base = rng.counter();
    const std::size_t wanted = ranks.size() - done;
    const std::size_t lanes = std::min(kLanes, wanted + wanted / 8 + 4);
    for (std::size_t i = 0; i < lanes; ++i) block.counters[i] = base + i;
    block.compute(kernel, *this, lanes);
    std::uint64_t next = base;  // the counter of the next draw
    while (done < ranks.size() && next - base < lanes) {
      const std::size_t lane = next - base;
      RngCursor cursor(rng.rng(), next + 1);
      ranks[done++] = finish(Candidate{block.xs[lane], block.ranks[lane]}, cursor);
      next = cursor.counter();
    }
    rng = RngCursor(rng.rng(), next);
  }
}

}  // namespace embscale::workloads
