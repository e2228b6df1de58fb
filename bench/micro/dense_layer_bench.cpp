// The dense layers' speed against the BLAS they call (issue 32's target: an InnerProduct at least
// 0.8 of sgemm alone on the same shapes, forward and backward), in the same run:
//   dense/inner_product_forward/<rows>x<in>x<out>   the layer (lib/model, its registry's maker):
//                                                   bias copy, gemm, nothing else
//   dense/sgemm_forward/<rows>x<in>x<out>           cblas_sgemm of x W alone (the baseline)
//   dense/inner_product_backward/...                the layer's backward: dW, db, dx
//   dense/sgemm_backward/...                        the two products of dW = x^T dy and dx = dy W^T
//   dense/fused_inner_product_forward/...           FusedInnerProduct (the ReLU pass on top)
// Shapes: HugeCTR's samples' layers at this machine's per-rank batches (DCN 429 -> 1024 and
// 1024 -> 1024, DLRM's top 480 -> 1024 and 1024 -> 512). One thread (an MPI rank per core).
// Ratios: bench/micro/dense_ratios.py reads the JSON output.
#include <benchmark/benchmark.h>

#include <cblas.h>

#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/blas.hpp"
#include "model/dense_op.hpp"
#include "model/layers/layer_registry.hpp"

namespace embscale::model {
namespace {

struct Shape {
  std::int64_t rows, in, out;
};
const std::vector<Shape> kShapes = {{512, 429, 1024}, {512, 1024, 1024}, {1024, 480, 1024}, {1024, 1024, 512}};

std::string name_of(const char* what, Shape s) {
  return std::string("dense/") + what + "/" + std::to_string(s.rows) + "x" + std::to_string(s.in) + "x" +
         std::to_string(s.out);
}

std::vector<float> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// One layer built alone (as the graph builds it), its bottom and top.
struct LayerOnItsOwn {
  config::DenseLayerNode node;
  std::string origin = "dense_layer_bench";
  ParameterStore<float> store;
  std::unique_ptr<DenseOp<float>> op;
  Blob<float> bottom, top;
  StepInfo step;

  LayerOnItsOwn(const char* type, Shape s) {
    node.name = "fc";
    node.type = type;
    node.path = "layers[fc]";
    node.bottoms = {"x"};
    node.tops = {"fc"};
    node.json = {{"name", "fc"}, {"type", type}, {"bottom", "x"}, {"top", "fc"}, {"fc_param", {{"num_output", s.out}}}};
    const LayerBuild<float> build{node, origin, {{1, s.in, false}}, 0, 1, 0, 1, nullptr, store};
    op = find_layer(type)->maker<float>()(build);
    store.allocate();
    op->initialize();
    bottom.shape = {1, s.in, false};
    bottom.value = random_values(static_cast<std::size_t>(s.rows * s.in), 1);
    bottom.grad.assign(bottom.value.size(), 0.0f);
    top.shape = {1, s.out, false};
    top.value.assign(static_cast<std::size_t>(s.rows * s.out), 0.0f);
    top.grad = random_values(top.value.size(), 2);
    step = {s.rows, s.rows, 0, 1, true};
  }
  void forward() {
    const Blob<float>* in[] = {&bottom};
    Blob<float>* out[] = {&top};
    op->forward(in, out, step);
  }
  void backward() {
    Blob<float>* in[] = {&bottom};
    const Blob<float>* out[] = {&top};
    op->backward(in, out, step);
  }
};

void set_flops(benchmark::State& state, Shape s, int products) {
  state.counters["flops"] = benchmark::Counter(2.0 * static_cast<double>(s.rows * s.in * s.out) * products,
                                               benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  set_blas_threads(1);
  for (const Shape s : kShapes) {
    for (const auto& [name, type] : {std::pair{"inner_product_forward", "InnerProduct"},
                                     std::pair{"fused_inner_product_forward", "FusedInnerProduct"}})
      benchmark::RegisterBenchmark(name_of(name, s).c_str(), [s, type = std::string(type)](benchmark::State& state) {
        LayerOnItsOwn layer(type.c_str(), s);
        for (auto _ : state) {
          layer.forward();
          benchmark::DoNotOptimize(layer.top.value.data());
        }
        set_flops(state, s, 1);
      });
    benchmark::RegisterBenchmark(name_of("sgemm_forward", s).c_str(), [s](benchmark::State& state) {
      const auto x = random_values(static_cast<std::size_t>(s.rows * s.in), 1);
      const auto w = random_values(static_cast<std::size_t>(s.in * s.out), 3);
      std::vector<float> y(static_cast<std::size_t>(s.rows * s.out));
      for (auto _ : state) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(s.rows), static_cast<int>(s.out),
                    static_cast<int>(s.in), 1.0f, x.data(), static_cast<int>(s.in), w.data(), static_cast<int>(s.out),
                    0.0f, y.data(), static_cast<int>(s.out));
        benchmark::DoNotOptimize(y.data());
      }
      set_flops(state, s, 1);
    });
    benchmark::RegisterBenchmark(name_of("inner_product_backward", s).c_str(), [s](benchmark::State& state) {
      LayerOnItsOwn layer("InnerProduct", s);
      layer.forward();
      for (auto _ : state) {
        layer.backward();
        benchmark::DoNotOptimize(layer.bottom.grad.data());
      }
      set_flops(state, s, 2);
    });
    benchmark::RegisterBenchmark(name_of("sgemm_backward", s).c_str(), [s](benchmark::State& state) {
      const auto x = random_values(static_cast<std::size_t>(s.rows * s.in), 1);
      const auto w = random_values(static_cast<std::size_t>(s.in * s.out), 3);
      const auto dy = random_values(static_cast<std::size_t>(s.rows * s.out), 2);
      std::vector<float> dw(w.size()), dx(x.size());
      const int m = static_cast<int>(s.rows), k = static_cast<int>(s.in), n = static_cast<int>(s.out);
      for (auto _ : state) {
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, k, n, m, 1.0f, x.data(), k, dy.data(), n, 0.0f, dw.data(),
                    n);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, k, n, 1.0f, dy.data(), n, w.data(), n, 1.0f, dx.data(),
                    k);
        benchmark::DoNotOptimize(dx.data());
      }
      set_flops(state, s, 2);
    });
  }
}

}  // namespace
}  // namespace embscale::model

int main(int argc, char** argv) {
  embscale::model::register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
