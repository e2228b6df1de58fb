// Key samplers: one slot's key distribution at one iteration, drawing key indices in
// [0, space()). Index 0 is the hot end of skewed distributions; the key mapping (identity or a
// permutation) and the slot's offset are applied after sampling (workloads/slot_generator.hpp).
//
// Every sampler is immutable after construction and draws only from the cursor it is given, so a
// draw is a pure function of the cursor's (seed, stream, counter): any rank or thread computes the
// same key for the same sample. The samplers here are the general ones; the peers' generators
// (HugeCTR, FBGEMM, MLPerf, DLRM, TorchRec) are in workloads/peer_key_samplers.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "core/rng.hpp"
#include "workloads/zipf_sampler.hpp"

namespace embscale::workloads {

class KeySampler {
 public:
  virtual ~KeySampler() = default;
  // The number of key indices, N >= 1: draws are in [0, N).
  virtual std::uint64_t space() const noexcept = 0;
  virtual std::uint64_t draw(RngCursor& rng) const = 0;
  // indices[i] = draw(cursors[i]) for every i, each cursor left where that draw leaves it. The
  // same values as one draw at a time; samplers with a batch path (Zipf) are faster through it.
  virtual void draw_each(std::span<RngCursor> cursors, std::span<std::uint64_t> indices) const;
};

using SharedSampler = std::shared_ptr<const KeySampler>;

// Every index with probability 1/N (exact: RngCursor::below).
class UniformKeys final : public KeySampler {
 public:
  explicit UniformKeys(std::uint64_t space);
  std::uint64_t space() const noexcept override { return below_.n(); }
  std::uint64_t draw(RngCursor& rng) const override { return below_(rng); }

 private:
  UniformBelow below_;
};

// indices[i] = zipf(cursors[i]) - 1 through ZipfSampler's batch path.
void zipf_indices(const ZipfSampler& zipf, std::span<RngCursor> cursors, std::span<std::uint64_t> indices);

// P(index k) = (k + 1)^-s / H(N, s): the Zipf rank minus one (workloads/zipf_sampler.hpp).
class ZipfKeys final : public KeySampler {
 public:
  ZipfKeys(std::uint64_t space, double exponent);
  std::uint64_t space() const noexcept override { return static_cast<std::uint64_t>(zipf_.n()); }
  std::uint64_t draw(RngCursor& rng) const override { return static_cast<std::uint64_t>(zipf_(rng) - 1); }
  void draw_each(std::span<RngCursor> cursors, std::span<std::uint64_t> indices) const override;

 private:
  ZipfSampler zipf_;
};

// YCSB's hotspot: a fraction `hot_access_fraction` of draws is uniform on the hot set [0, H), the
// rest uniform on [H, N), H = max(1, round(hot_key_fraction N)). With H = N every draw is hot.
class HotspotKeys final : public KeySampler {
 public:
  HotspotKeys(std::uint64_t space, double hot_key_fraction, double hot_access_fraction);
  std::uint64_t space() const noexcept override { return n_; }
  std::uint64_t draw(RngCursor& rng) const override;
  std::uint64_t hot_keys() const noexcept { return hot_; }

 private:
  std::uint64_t n_;
  std::uint64_t hot_;
  double hot_access_fraction_;
  UniformBelow hot_index_{1};   // [0, hot)
  UniformBelow cold_index_{1};  // [0, n - hot), when hot < n
};

// One of several samplers over the same space, chosen with probability weight / sum of weights.
class MixtureKeys final : public KeySampler {
 public:
  MixtureKeys(std::vector<std::pair<double, SharedSampler>> weighted_components);
  std::uint64_t space() const noexcept override { return n_; }
  std::uint64_t draw(RngCursor& rng) const override;
  void draw_each(std::span<RngCursor> cursors, std::span<std::uint64_t> indices) const override;

 private:
  std::size_t component(double u) const noexcept;  // the component a uniform u in [0, 1) picks

  std::vector<double> cumulative_;  // cumulative_[i]: probability of components 0..i; last is 1
  std::vector<SharedSampler> components_;
  std::uint64_t n_;
};

// The base's draws rotated by `offset`: index (k + offset) mod N. Drift moves the hot set so.
class RotatedKeys final : public KeySampler {
 public:
  RotatedKeys(SharedSampler base, std::uint64_t offset);
  std::uint64_t space() const noexcept override { return base_->space(); }
  std::uint64_t draw(RngCursor& rng) const override { return rotate(base_->draw(rng)); }
  void draw_each(std::span<RngCursor> cursors, std::span<std::uint64_t> indices) const override;

 private:
  std::uint64_t rotate(std::uint64_t k) const noexcept {
    const std::uint64_t n = base_->space();
    return k < n - offset_ ? k + offset_ : k - (n - offset_);  // (k + offset) mod n without overflow
  }

  SharedSampler base_;
  std::uint64_t offset_;  // < N
};

// The base's draws mirrored: index N - 1 - k (id growth with the newest ids hottest).
class MirroredKeys final : public KeySampler {
 public:
  explicit MirroredKeys(SharedSampler base) : base_(std::move(base)) {}
  std::uint64_t space() const noexcept override { return base_->space(); }
  std::uint64_t draw(RngCursor& rng) const override { return base_->space() - 1 - base_->draw(rng); }
  void draw_each(std::span<RngCursor> cursors, std::span<std::uint64_t> indices) const override;

 private:
  SharedSampler base_;
};

}  // namespace embscale::workloads
