// The sparse optimizers' update of one row, written once for the host and the device
// (lib/embedding/optimizers/README.md has the formulas and their sources; sparse_optimizer.hpp the
// contract). The host's optimizer classes call these in their apply(); a device row store's
// kernel calls the same functions, so both give the same bits: every operation is one of
// kv/portable/host_device.hpp's f*_rn, rounded on its own on both sides (never a fused multiply-add).
//
// A row is `dim` values at `row`, its state beside it at `state` (the class's layout: Adam's m
// then v, AdaGrad's accumulators, ...). `g` is the step's combined gradient of the row: anything
// indexable by [d] giving a float (a pointer, a span, or ZeroGradient for an untouched row under
// Global). Adam's bias-corrected step size needs pow(): the host computes it once per step and
// passes it as a float, so Adam is bit-identical on both sides. The one exception is LazyGlobal
// Adam, whose catch-up depends on each row's last step and is computed where the row is updated,
// with pow() in double: CUDA's pow may differ from glibc's in the last bit of the double, so a
// row's float may differ by one ulp (the GPU tests allow exactly that, for this kind only).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kv/portable/host_device.hpp"

namespace embscale::embedding::portable {

using kv::portable::fadd_rn;
using kv::portable::fdiv_rn;
using kv::portable::fmul_rn;
using kv::portable::fsqrt_rn;
using kv::portable::fsub_rn;

// The gradient of a row the step did not touch: every value 0, without a buffer of zeros.
struct ZeroGradient {
  EMBSCALE_HD constexpr float operator[](std::size_t) const noexcept { return 0.0f; }
};

// Each kind's update of one value d of a row is a *_value function; its *_row function runs it for
// d = 0, 1, ... (the host's order), and a device kernel with a thread per value runs the same
// function for its own d, so both give the same bits. Row-wise AdaGrad and LazyGlobal Adam also need
// values of the whole row (RowPrologue, below update_row's reference).

// SGD: w -= lr g.
EMBSCALE_HD inline void sgd_value(float& w, float g, float lr) { w = fsub_rn(w, fmul_rn(lr, g)); }
template <class Gradient> EMBSCALE_HD_T void sgd_row(float* row, const Gradient& g, std::size_t dim, float lr) {
  for (std::size_t d = 0; d < dim; ++d) sgd_value(row[d], g[d], lr);
}

// MomentumSGD: a = f a - lr g; w += a.
EMBSCALE_HD inline void momentum_value(float& w, float& momentum, float g, float lr, float f) {
  const float a = fsub_rn(fmul_rn(f, momentum), fmul_rn(lr, g));
  momentum = a;
  w = fadd_rn(w, a);
}
template <class Gradient>
EMBSCALE_HD_T void momentum_row(float* row, float* momentum, const Gradient& g, std::size_t dim, float lr, float f) {
  for (std::size_t d = 0; d < dim; ++d) momentum_value(row[d], momentum[d], g[d], lr, f);
}

// Nesterov: a' = mu a - lr g; w += -mu a + (1 + mu) a'.
EMBSCALE_HD inline void nesterov_value(float& w, float& momentum, float g, float lr, float mu) {
  const float one_plus_mu = fadd_rn(1.0f, mu);
  const float old = momentum;
  const float a = fsub_rn(fmul_rn(mu, old), fmul_rn(lr, g));
  momentum = a;
  w = fadd_rn(w, fadd_rn(fmul_rn(-mu, old), fmul_rn(one_plus_mu, a)));
}
template <class Gradient>
EMBSCALE_HD_T void nesterov_row(float* row, float* momentum, const Gradient& g, std::size_t dim, float lr, float mu) {
  for (std::size_t d = 0; d < dim; ++d) nesterov_value(row[d], momentum[d], g[d], lr, mu);
}

// Adam's hyper-parameters as floats (1 - beta rounded from double, as the host class does).
struct AdamParams {
  float b1, b2, one_minus_b1, one_minus_b2, epsilon;
};

// Adam (Local and Global): m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
// w -= lr_t m / (sqrt(v) + eps), lr_t the step's bias-corrected size. State: m (dim), then v (dim).
EMBSCALE_HD inline void adam_value(float& w, float& m, float& v, float g, const AdamParams& p, float lr_t) {
  const float mi = fadd_rn(fmul_rn(p.b1, m), fmul_rn(p.one_minus_b1, g));
  const float vi = fadd_rn(fmul_rn(p.b2, v), fmul_rn(fmul_rn(p.one_minus_b2, g), g));
  m = mi;
  v = vi;
  w = fsub_rn(w, fdiv_rn(fmul_rn(lr_t, mi), fadd_rn(fsqrt_rn(vi), p.epsilon)));
}
template <class Gradient>
EMBSCALE_HD_T void adam_row(float* row, float* state, const Gradient& g, std::size_t dim, const AdamParams& p,
                            float lr_t) {
  for (std::size_t d = 0; d < dim; ++d) adam_value(row[d], state[d], state[dim + d], g[d], p, lr_t);
}

// LazyGlobal Adam's row: the weight catches up with the steps the row missed (catch_up, computed
// per row from its last step), then m and v decay by b1^s, b2^s and take this step's gradient.
EMBSCALE_HD inline void lazy_adam_value(float& w, float& m, float& v, float g, const AdamParams& p, float catch_up,
                                        float b1_s, float b2_s) {
  w = fsub_rn(w, fdiv_rn(fmul_rn(catch_up, m), fadd_rn(fsqrt_rn(v), p.epsilon)));
  m = fadd_rn(fmul_rn(b1_s, m), fmul_rn(p.one_minus_b1, g));
  v = fadd_rn(fmul_rn(b2_s, v), fmul_rn(fmul_rn(p.one_minus_b2, g), g));
}
template <class Gradient>
EMBSCALE_HD_T void lazy_adam_row(float* row, float* state, const Gradient& g, std::size_t dim, const AdamParams& p,
                                 float catch_up, float b1_s, float b2_s) {
  for (std::size_t d = 0; d < dim; ++d)
    lazy_adam_value(row[d], state[d], state[dim + d], g[d], p, catch_up, b1_s, b2_s);
}

// AdaGrad: s += g^2; w -= lr g / (sqrt(s) + eps). One accumulator per value.
EMBSCALE_HD inline void adagrad_value(float& w, float& accumulator, float g, float lr, float epsilon) {
  const float s = fadd_rn(accumulator, fmul_rn(g, g));
  accumulator = s;
  w = fsub_rn(w, fdiv_rn(fmul_rn(lr, g), fadd_rn(fsqrt_rn(s), epsilon)));
}
template <class Gradient>
EMBSCALE_HD_T void adagrad_row(float* row, float* accumulator, const Gradient& g, std::size_t dim, float lr,
                               float epsilon) {
  for (std::size_t d = 0; d < dim; ++d) adagrad_value(row[d], accumulator[d], g[d], lr, epsilon);
}

// Row-wise AdaGrad (FBGEMM's): s += (sum_d g_d^2) / dim; w -= lr g / (sqrt(s) + eps). One
// accumulator per row; the squares summed in order d = 0, 1, ...
template <class Gradient>
EMBSCALE_HD_T float rowwise_adagrad_accumulator(float accumulator, const Gradient& g, std::size_t dim) {
  float sum_squares = 0.0f;
  for (std::size_t d = 0; d < dim; ++d) sum_squares = fadd_rn(sum_squares, fmul_rn(g[d], g[d]));
  return fadd_rn(accumulator, fdiv_rn(sum_squares, static_cast<float>(dim)));
}
EMBSCALE_HD inline float rowwise_adagrad_multiplier(float accumulator, float lr, float epsilon) {
  return fdiv_rn(lr, fadd_rn(fsqrt_rn(accumulator), epsilon));
}
template <class Gradient>
EMBSCALE_HD_T void rowwise_adagrad_row(float* row, float* accumulator, const Gradient& g, std::size_t dim, float lr,
                                       float epsilon) {
  const float s = rowwise_adagrad_accumulator(accumulator[0], g, dim);
  accumulator[0] = s;
  const float multiplier = rowwise_adagrad_multiplier(s, lr, epsilon);
  for (std::size_t d = 0; d < dim; ++d) sgd_value(row[d], g[d], multiplier);  // w -= multiplier g
}

// ---- The optimizer of one step as plain data, for a device kernel -------------------------------

enum class OptimizerKind : std::uint8_t { kSgd, kMomentum, kNesterov, kAdam, kLazyAdam, kAdaGrad, kRowWiseAdaGrad };

// Everything update_row needs of a SparseOptimizer at one step (SparseOptimizer::portable_ref):
// trivially copyable, so a kernel takes it by value.
struct OptimizerRef {
  OptimizerKind kind = OptimizerKind::kSgd;
  bool global = false;           // the Global update: untouched rows move too (update_untouched_row)
  std::int32_t state_width = 0;  // values of state after each row's dim values
  float lr = 0;                  // learning rate
  float factor = 0;              // MomentumSGD's factor, Nesterov's mu
  float epsilon = 0;             // AdaGrads'
  float initial_accumulator = 0;
  AdamParams adam{};
  float adam_lr_t = 0;  // Adam: this step's bias-corrected size (computed once per step, on the host)
  // LazyGlobal Adam: its catch-up is per row (from the row's last step), in double.
  double beta1 = 0, beta2 = 0, lr_double = 0;
  std::int64_t step = 0;  // the 1-based step
};

// LazyGlobal Adam's last step, stored as kStepDigits base-256 digits (exact in fp16 and bf16):
// optimizers/step_digits.hpp on spans, here on raw state values.
inline constexpr int kStepDigits = 4;
EMBSCALE_HD inline void store_step_digits(std::int64_t step, float* digits) {
  auto rest = static_cast<std::uint32_t>(static_cast<std::uint64_t>(step));  // mod 2^32
  for (int i = 0; i < kStepDigits; ++i, rest >>= 8) digits[i] = static_cast<float>(rest & 0xffu);
}
// The stored step mod 2^32.
EMBSCALE_HD inline std::uint32_t load_step_digits(const float* digits) {
  std::uint32_t last = 0;
  for (int i = kStepDigits - 1; i >= 0; --i) last = (last << 8) | static_cast<std::uint32_t>(digits[i]);
  return last;
}
// Steps from the stored step to `step` (>= the stored one), mod 2^32.
EMBSCALE_HD inline std::int64_t steps_since_digits(const float* digits, std::int64_t step) {
  const auto now = static_cast<std::uint32_t>(static_cast<std::uint64_t>(step));
  return static_cast<std::int64_t>(static_cast<std::uint32_t>(now - load_step_digits(digits)));
}

// LazyGlobal Adam's catch-up of a row at `step` from its stored last step (`last`: the digits).
// Its pow() runs where the row does: on a GPU its last bit may differ from the host's.
struct LazyAdamCatchUp {
  float catch_up, decay1, decay2;
};
EMBSCALE_HD inline LazyAdamCatchUp lazy_adam_catch_up(const OptimizerRef& o, std::int64_t step, const float* last) {
  const std::int64_t skipped = steps_since_digits(last, step);
  const double p = static_cast<double>(step - skipped);
  const double s = static_cast<double>(skipped);
  const double decay1 = pow(o.beta1, s);
  const auto catch_up = static_cast<float>(o.lr_double / (1.0 - o.beta1) * sqrt(1.0 - pow(o.beta2, p)) /
                                           (1.0 - pow(o.beta1, p)) * (1.0 - decay1));
  return {catch_up, static_cast<float>(decay1), static_cast<float>(pow(o.beta2, s))};
}

// LazyGlobal Adam's row at `step`: the catch-up from the row's last step, then lazy_adam_row.
template <class Gradient>
EMBSCALE_HD_T void lazy_adam_step(const OptimizerRef& o, std::int64_t step, float* row, float* state, const Gradient& g,
                                  std::size_t dim) {
  float* const last = state + 2 * dim;
  const LazyAdamCatchUp c = lazy_adam_catch_up(o, step, last);
  lazy_adam_row(row, state, g, dim, o.adam, c.catch_up, c.decay1, c.decay2);
  store_step_digits(step, last);
}

// One touched row's update: what SparseOptimizer::update does, from the plain reference.
EMBSCALE_HD inline void update_row(const OptimizerRef& o, float* row, float* state, const float* g, std::size_t dim) {
  switch (o.kind) {
    case OptimizerKind::kSgd: sgd_row(row, g, dim, o.lr); return;
    case OptimizerKind::kMomentum: momentum_row(row, state, g, dim, o.lr, o.factor); return;
    case OptimizerKind::kNesterov: nesterov_row(row, state, g, dim, o.lr, o.factor); return;
    case OptimizerKind::kAdam: adam_row(row, state, g, dim, o.adam, o.adam_lr_t); return;
    case OptimizerKind::kLazyAdam: lazy_adam_step(o, o.step, row, state, g, dim); return;
    case OptimizerKind::kAdaGrad: adagrad_row(row, state, g, dim, o.lr, o.epsilon); return;
    case OptimizerKind::kRowWiseAdaGrad: rowwise_adagrad_row(row, state, g, dim, o.lr, o.epsilon); return;
  }
}

// Whether untouched_row can change a row: Global MomentumSGD, Nesterov and Adam.
EMBSCALE_HD inline bool moves_untouched_rows(const OptimizerRef& o) {
  return o.global &&
         (o.kind == OptimizerKind::kMomentum || o.kind == OptimizerKind::kNesterov || o.kind == OptimizerKind::kAdam);
}

// A row the step did not touch: SparseOptimizer::update_untouched (a zero-gradient step under
// Global for the kinds that move; nothing otherwise).
EMBSCALE_HD inline void untouched_row(const OptimizerRef& o, float* row, float* state, std::size_t dim) {
  if (!moves_untouched_rows(o)) return;
  const ZeroGradient zero;
  switch (o.kind) {
    case OptimizerKind::kMomentum: momentum_row(row, state, zero, dim, o.lr, o.factor); return;
    case OptimizerKind::kNesterov: nesterov_row(row, state, zero, dim, o.lr, o.factor); return;
    case OptimizerKind::kAdam: adam_row(row, state, zero, dim, o.adam, o.adam_lr_t); return;
    default: return;
  }
}

// ---- One value at a time: a device kernel's thread per value ----------------------------------
//
// update_row as three parts, for threads that share a row: row_prologue (every thread of the row,
// reading the row's per-row state and the whole gradient in the host's order), update_value (each
// thread its own values d), then row_epilogue (one thread, after every thread of the row has run
// its prologue: it stores the per-row state). Run in that order they are update_row, bit for bit.
struct RowPrologue {
  float accumulator = 0;   // row-wise AdaGrad: the row's new accumulator
  float multiplier = 0;    // row-wise AdaGrad: lr / (sqrt(accumulator) + eps)
  LazyAdamCatchUp lazy{};  // LazyGlobal Adam
};

EMBSCALE_HD inline RowPrologue row_prologue(const OptimizerRef& o, const float* state, const float* g,
                                            std::size_t dim) {
  RowPrologue p;
  if (o.kind == OptimizerKind::kRowWiseAdaGrad) {
    p.accumulator = rowwise_adagrad_accumulator(state[0], g, dim);
    p.multiplier = rowwise_adagrad_multiplier(p.accumulator, o.lr, o.epsilon);
  } else if (o.kind == OptimizerKind::kLazyAdam) {
    p.lazy = lazy_adam_catch_up(o, o.step, state + 2 * dim);
  }
  return p;
}

// Value d of a touched row's update (g: the row's gradient).
EMBSCALE_HD inline void update_value(const OptimizerRef& o, const RowPrologue& p, float* row, float* state,
                                     const float* g, std::size_t dim, std::size_t d) {
  switch (o.kind) {
    case OptimizerKind::kSgd: sgd_value(row[d], g[d], o.lr); return;
    case OptimizerKind::kMomentum: momentum_value(row[d], state[d], g[d], o.lr, o.factor); return;
    case OptimizerKind::kNesterov: nesterov_value(row[d], state[d], g[d], o.lr, o.factor); return;
    case OptimizerKind::kAdam: adam_value(row[d], state[d], state[dim + d], g[d], o.adam, o.adam_lr_t); return;
    case OptimizerKind::kLazyAdam:
      lazy_adam_value(row[d], state[d], state[dim + d], g[d], o.adam, p.lazy.catch_up, p.lazy.decay1, p.lazy.decay2);
      return;
    case OptimizerKind::kAdaGrad: adagrad_value(row[d], state[d], g[d], o.lr, o.epsilon); return;
    case OptimizerKind::kRowWiseAdaGrad: sgd_value(row[d], g[d], p.multiplier); return;
  }
}

// The per-row state a touched row's update stores once (after every value's prologue).
EMBSCALE_HD inline void row_epilogue(const OptimizerRef& o, const RowPrologue& p, float* state, std::size_t dim) {
  if (o.kind == OptimizerKind::kRowWiseAdaGrad) state[0] = p.accumulator;
  if (o.kind == OptimizerKind::kLazyAdam) store_step_digits(o.step, state + 2 * dim);
}

// Value d of an untouched row under Global (untouched_row, one value; no per-row state).
EMBSCALE_HD inline void untouched_value(const OptimizerRef& o, float* row, float* state, std::size_t dim,
                                        std::size_t d) {
  if (!moves_untouched_rows(o)) return;
  switch (o.kind) {
    case OptimizerKind::kMomentum: momentum_value(row[d], state[d], 0.0f, o.lr, o.factor); return;
    case OptimizerKind::kNesterov: nesterov_value(row[d], state[d], 0.0f, o.lr, o.factor); return;
    case OptimizerKind::kAdam: adam_value(row[d], state[d], state[dim + d], 0.0f, o.adam, o.adam_lr_t); return;
    default: return;
  }
}

// The state a new row starts with: SparseOptimizer::init_state.
EMBSCALE_HD inline void init_state_row(const OptimizerRef& o, float* state, std::size_t dim) {
  const bool adagrad = o.kind == OptimizerKind::kAdaGrad || o.kind == OptimizerKind::kRowWiseAdaGrad;
  for (std::int32_t i = 0; i < o.state_width; ++i) state[i] = adagrad ? o.initial_accumulator : 0.0f;
  if (o.kind == OptimizerKind::kLazyAdam) store_step_digits(1, state + 2 * dim);
}

}  // namespace embscale::embedding::portable
