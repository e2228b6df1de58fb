// The sparse optimizers' row updates (lib/embedding/portable/optimizer_ref.hpp) on the device
// against the same source on the host: every kind, touched and untouched rows (Global), a new
// row's state, over steps where rows skip some (LazyGlobal's catch-up). Bit for bit (every
// operation is one of kv/portable/host_device.hpp's f*_rn, rounded on its own on both), but for
// LazyGlobal Adam, whose per-row catch-up
// calls pow() in double: the device's math library may differ from glibc's in the last bit of
// the double, so its rows are held to one float ulp. The host classes run these same functions
// (tests/embedding/portable/optimizer_ref_test.cpp), so this is the CPU optimizer on the GPU.
//
// Standalone (cudart only, no GoogleTest): exits 77 without a GPU.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "embedding/portable/optimizer_ref.hpp"
#include "gpu_check.hpp"
#include "optimizer_refs.hpp"

namespace {

namespace portable = embscale::embedding::portable;
using portable::OptimizerKind;

// One step of every row: touched rows (touched[r]) take update_row, the others untouched_row.
__global__ void step_rows(portable::OptimizerRef o, float* rows, float* states, const float* grads,
                          const std::uint8_t* touched, int dim, int n) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  float* row = rows + static_cast<std::size_t>(r) * dim;
  float* state = states + static_cast<std::size_t>(r) * o.state_width;
  if (touched[r]) portable::update_row(o, row, state, grads + static_cast<std::size_t>(r) * dim, dim);
  else portable::untouched_row(o, row, state, dim);
}

__global__ void init_states(portable::OptimizerRef o, float* states, int dim, int n) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) portable::init_state_row(o, states + static_cast<std::size_t>(r) * o.state_width, dim);
}

using embscale::gpu_check::at_step;
using embscale::gpu_check::DeviceArray;
using embscale::gpu_check::ref_of;
using embscale::gpu_check::ulps_apart;

void check_kind(OptimizerKind kind, bool global, int dim, std::mt19937_64& random) {
  constexpr int kRows = 257;
  std::normal_distribution<float> value(0.0f, 0.3f);
  auto o = ref_of(kind, global, dim);
  const auto state_values = static_cast<std::size_t>(kRows) * static_cast<std::size_t>(o.state_width);
  std::vector<float> rows(static_cast<std::size_t>(kRows) * dim), states(state_values, -9.0f);
  for (auto& x : rows) x = value(random);
  DeviceArray<float> d_rows(rows), d_states(states);
  init_states<<<(kRows + 127) / 128, 128>>>(o, d_states.get(), dim, kRows);
  CUDA_OK(cudaGetLastError());
  for (int r = 0; r < kRows; ++r)
    portable::init_state_row(o, states.data() + static_cast<std::size_t>(r) * o.state_width, dim);
  CHECK(d_states.download() == states, "kind %d: init_state_row differs on the device", static_cast<int>(kind));
  const bool lazy = kind == OptimizerKind::kLazyAdam;
  std::int64_t worst = 0;
  for (std::int64_t step = 1; step <= 10; ++step) {
    at_step(o, step);
    std::vector<float> grads(rows.size());
    for (auto& x : grads) x = value(random);
    std::vector<std::uint8_t> touched(kRows);
    for (int r = 0; r < kRows; ++r) touched[static_cast<std::size_t>(r)] = (step + r) % (r % 6 + 1) == 0;
    const DeviceArray<float> d_grads(grads);
    const DeviceArray<std::uint8_t> d_touched(touched);
    step_rows<<<(kRows + 127) / 128, 128>>>(o, d_rows.get(), d_states.get(), d_grads.get(), d_touched.get(), dim,
                                            kRows);
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaDeviceSynchronize());
    for (int r = 0; r < kRows; ++r) {
      float* row = rows.data() + static_cast<std::size_t>(r) * dim;
      float* state = states.data() + static_cast<std::size_t>(r) * o.state_width;
      if (touched[static_cast<std::size_t>(r)])
        portable::update_row(o, row, state, grads.data() + static_cast<std::size_t>(r) * dim, dim);
      else portable::untouched_row(o, row, state, dim);
    }
    const auto device_rows = d_rows.download();
    const auto device_states = d_states.download();
    if (lazy) {
      for (std::size_t i = 0; i < rows.size(); ++i) worst = std::max(worst, ulps_apart(device_rows[i], rows[i]));
      for (std::size_t i = 0; i < state_values; ++i) worst = std::max(worst, ulps_apart(device_states[i], states[i]));
      // Carry on from the device's values, so that a last-bit difference does not grow.
      rows = device_rows;
      states = device_states;
    } else {
      CHECK(device_rows == rows, "kind %d global %d dim %d step %lld: rows differ", static_cast<int>(kind), global, dim,
            static_cast<long long>(step));
      CHECK(device_states == states, "kind %d global %d dim %d step %lld: states differ", static_cast<int>(kind),
            global, dim, static_cast<long long>(step));
    }
  }
  if (lazy)
    CHECK(worst <= 1, "LazyGlobal Adam dim %d: %lld ulps apart (at most 1 allowed)", dim,
          static_cast<long long>(worst));
}

}  // namespace

int main() {
  if (embscale::gpu_check::no_gpu()) return 77;
  std::mt19937_64 random(20261128);
  const OptimizerKind kinds[] = {OptimizerKind::kSgd,           OptimizerKind::kMomentum, OptimizerKind::kNesterov,
                                 OptimizerKind::kAdam,          OptimizerKind::kLazyAdam, OptimizerKind::kAdaGrad,
                                 OptimizerKind::kRowWiseAdaGrad};
  for (const auto kind : kinds)
    for (const bool global : {false, true})
      for (const int dim : {1, 7, 128}) check_kind(kind, global, dim, random);
  std::printf("optimizer_ref: %d of %d checks failed\n", embscale::gpu_check::g_failures,
              embscale::gpu_check::g_checks);
  return embscale::gpu_check::g_failures == 0 ? 0 : 1;
}
