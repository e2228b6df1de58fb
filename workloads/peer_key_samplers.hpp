// The key distributions of other tools' generators, so that their published numbers can be
// reproduced here (workloads/README.md, "The peers' generators", says which settings of nnz and
// bag keys complete each one, and where embscale's differs).
//
//   hugectr_power_law  HugeCTR's data generator (IntPowerLawDataSimulator, v3.2 and later)
//   fbgemm_zipf        FBGEMM's TBE benchmark requests (tbe/utils/requests.py)
//   dlrm_uniform       DLRM's random input (dlrm_data_pytorch.py)
//   torchrec_uniform   TorchRec's RandomRecDataset: randint(0, N), i.e. UniformKeys
// MLPerf DLRMv2's multi-hot bags are a bag structure, not a key distribution: SlotGenerator's
// multi-hot companions.
#pragma once

#include <cstdint>

#include "config/synthetic_source.hpp"
#include "workloads/key_sampler.hpp"

namespace embscale::workloads {

// HugeCTR's continuous power law: y = ((N^(1-a) - 1) x + 1)^(1 / (1 - a)) on [1, N], x uniform,
// index round(y) - 1 (half away from zero), so P(k) = F(k + 3/2) - F(k + 1/2) clipped to [1, N]
// with F(y) = (y^(1-a) - 1) / (N^(1-a) - 1); a != 1. HugeCTR draws x as a float (24 bits), which
// leaves most of a large table's tail unreachable (1.3% of 4e7 keys at a = 1.3); x here has 53
// bits: the distribution HugeCTR's formula describes.
class HugeCtrPowerLawKeys final : public KeySampler {
 public:
  HugeCtrPowerLawKeys(std::uint64_t space, double alpha);
  std::uint64_t space() const noexcept override { return n_; }
  std::uint64_t draw(RngCursor& rng) const override;

 private:
  std::uint64_t n_;
  double one_minus_alpha_;
  double scale_;  // N^(1-a) - 1
};

// FBGEMM's Zipf indices: numpy's zipf(a) (P(x) = x^-a / zeta(a) for x >= 1, drawn below 2^63 as
// numpy's rejection loop does: exactly ZipfSampler(2^63 - 1, a)), folded (x - 1) mod N. For
// a <= 1 FBGEMM draws uniform indices instead, and so does this sampler.
class FbgemmZipfKeys final : public KeySampler {
 public:
  FbgemmZipfKeys(std::uint64_t space, double alpha);
  std::uint64_t space() const noexcept override { return n_; }
  std::uint64_t draw(RngCursor& rng) const override;
  void draw_each(std::span<RngCursor> cursors, std::span<std::uint64_t> indices) const override;

 private:
  std::uint64_t n_;
  bool uniform_;
  UniformBelow uniform_index_;
  ZipfSampler zeta_;
};

// DLRM's uniform indices: round(u (N - 1)) (numpy's round, half to even), u uniform in [0, 1):
// the first and the last index are half as likely as the others.
class DlrmUniformKeys final : public KeySampler {
 public:
  explicit DlrmUniformKeys(std::uint64_t space);
  std::uint64_t space() const noexcept override { return n_; }
  std::uint64_t draw(RngCursor& rng) const override;

 private:
  std::uint64_t n_;
};

// The exponent of a hugectr_power_law spec (its preset's, or zipf_alpha for "specific").
double hugectr_alpha(const config::KeySpec& spec);

SharedSampler make_hugectr_power_law(const config::KeySpec& spec, std::uint64_t space);
SharedSampler make_fbgemm_zipf(const config::KeySpec& spec, std::uint64_t space);
SharedSampler make_dlrm_uniform(const config::KeySpec& spec, std::uint64_t space);

}  // namespace embscale::workloads
