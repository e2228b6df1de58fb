#include "workloads/zipf_sampler.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/cursor_lanes.hpp"
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
    : n_(n), n_as_double_(static_cast<double>(n)), s_(exponent), one_minus_s_(1.0 - exponent),
      inverse_one_minus_s_(1.0 / (1.0 - exponent)) {
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

// The first candidates of a pass of lanes: lane i's draw (its Philox block, uniform, the hat's
// point and rank), computed for every lane in a loop GCC vectorizes at `level` (the same bits at
// every level: IEEE operations, no FMA contraction).
struct FirstCandidates {
  CursorLanes lanes;
  std::array<double, CursorLanes::kLanes> xs, ranks;

  void compute(const ZipfSampler& shared, std::size_t count, SimdLevel level) {
    lanes.draw_bits(count, level);
    const ZipfSampler sampler = shared;  // a local copy: the stores below cannot alias its fields
    double* __restrict x_out = xs.data();
    double* __restrict rank_out = ranks.data();
    run_at(level, [&]() EMBSCALE_ALWAYS_INLINE {
      for (std::size_t i = 0; i < count; ++i) {
        const ZipfSampler::Candidate c = sampler.candidate(lanes.uniform(i));
        x_out[i] = c.x;
        rank_out[i] = c.rank;
      }
    });
  }
  ZipfSampler::Candidate operator[](std::size_t i) const noexcept { return {xs[i], ranks[i]}; }
};

}  // namespace

void ZipfSampler::draw_each(std::span<RngCursor> cursors, std::span<std::int64_t> ranks, SimdLevel level) const {
  EMBSCALE_EXPECTS(cursors.size() == ranks.size(), "draw_each needs one rank per cursor");
  EMBSCALE_EXPECTS(cpu_runs(level), "the Zipf sampler was asked for a SIMD level this CPU cannot run");
  FirstCandidates first;
  for (std::size_t begin = 0; begin < cursors.size(); begin += CursorLanes::kLanes) {
    const std::size_t count = std::min(CursorLanes::kLanes, cursors.size() - begin);
    first.lanes.load(cursors.subspan(begin, count));
    first.compute(*this, count, level);
    for (std::size_t i = 0; i < count; ++i) {
      RngCursor& cursor = cursors[begin + i];
      cursor = RngCursor(cursor.rng(), cursor.counter() + 1);  // past the first draw
      ranks[begin + i] = finish(first[i], cursor);
    }
  }
}

void ZipfSampler::fill(RngCursor& rng, std::span<std::int64_t> ranks, SimdLevel level) const {
  EMBSCALE_EXPECTS(cpu_runs(level), "the Zipf sampler was asked for a SIMD level this CPU cannot run");
  FirstCandidates first;
  first.lanes.seeds.fill(rng.rng().seed());
  first.lanes.streams.fill(rng.rng().stream());
  std::size_t done = 0;
  while (done < ranks.size()) {
    // Lane i is the draw at counter base + i; a rejection consumes later counters, whose lanes
    // are then skipped. About 1 in 10..20 draws is rejected: a little slack saves a pass.
    const std::uint64_t base = rng.counter();
    const std::size_t wanted = ranks.size() - done;
    const std::size_t count = std::min(CursorLanes::kLanes, wanted + wanted / 8 + 4);
    for (std::size_t i = 0; i < count; ++i) first.lanes.counters[i] = base + i;
    first.compute(*this, count, level);
    std::uint64_t next = base;  // the counter of the next draw
    while (done < ranks.size() && next - base < count) {
      RngCursor cursor(rng.rng(), next + 1);
      ranks[done++] = finish(first[next - base], cursor);
      next = cursor.counter();
    }
    rng = RngCursor(rng.rng(), next);
  }
}

}  // namespace embscale::workloads
