// The dense tower (lib/model/dense_tower.hpp): two InnerProduct + ReLU layers on every combination
// of partition_dim (data, feature) against a single-process multi-layer reference in double, on
// 1, 2 and 4 ranks (10 rows: uneven shares; a rank with no columns of the 3-wide layer on 4
// ranks). Three SGD steps of a squared loss; each step's output rows and the gradient that reaches
// the embedding output (each rank its samples' rows), and every layer's final W and b, must match.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "comm/mpi_communicator.hpp"
#include "core/batch_source.hpp"
#include "model/dense_tower.hpp"

namespace embscale::model {
namespace {

constexpr std::int64_t kRows = 10;
const std::vector<std::int64_t> kWidths = {6, 5, 3};  // inputs, then each layer's outputs
constexpr std::uint64_t kSeed = 91;
constexpr float kRate = 0.3f;
constexpr int kSteps = 3;

double input_value(std::int64_t r, std::int64_t i) {
  return std::sin(0.9 * static_cast<double>(r) + 0.4 * static_cast<double>(i));
}
double target_value(std::int64_t r, std::int64_t j) { return 0.5 * std::cos(static_cast<double>(2 * r + j)); }

// One process, every row, in double: y = relu(relu(x W0 + b0) W1 + b1), loss sum (y - t)^2 / 2 rows.
struct Reference {
  std::vector<std::vector<double>> w, b;  // per layer: [in x out] row-major, [out]
  std::vector<double> y, dx;              // the last step's output and the input's gradient

  Reference() {
    for (std::size_t l = 0; l + 1 < kWidths.size(); ++l) {
      const std::int64_t in = kWidths[l], out = kWidths[l + 1];
      w.emplace_back(static_cast<std::size_t>(in * out));
      b.emplace_back(static_cast<std::size_t>(out), 0.0);
      for (std::int64_t i = 0; i < in; ++i)
        for (std::int64_t j = 0; j < out; ++j)
          w[l][static_cast<std::size_t>(i * out + j)] = initial_weight(kSeed + l, i, j, in, out);
    }
  }

  void step() {
    const std::size_t layers = w.size();
    std::vector<std::vector<double>> a(layers + 1), z(layers);
    for (std::int64_t r = 0; r < kRows; ++r)
      for (std::int64_t i = 0; i < kWidths[0]; ++i) a[0].push_back(input_value(r, i));
    for (std::size_t l = 0; l < layers; ++l) {
      const std::int64_t in = kWidths[l], out = kWidths[l + 1];
      z[l].assign(static_cast<std::size_t>(kRows * out), 0.0);
      a[l + 1].assign(z[l].size(), 0.0);
      for (std::int64_t r = 0; r < kRows; ++r)
        for (std::int64_t j = 0; j < out; ++j) {
          double v = b[l][static_cast<std::size_t>(j)];
          for (std::int64_t i = 0; i < in; ++i)
            v += a[l][static_cast<std::size_t>(r * in + i)] * w[l][static_cast<std::size_t>(i * out + j)];
          z[l][static_cast<std::size_t>(r * out + j)] = v;
          a[l + 1][static_cast<std::size_t>(r * out + j)] = std::max(v, 0.0);
        }
    }
    y = a[layers];
    std::vector<double> da(y.size());
    for (std::int64_t r = 0; r < kRows; ++r)
      for (std::int64_t j = 0; j < kWidths.back(); ++j) {
        const auto k = static_cast<std::size_t>(r * kWidths.back() + j);
        da[k] = (y[k] - target_value(r, j)) / kRows;
      }
    for (std::size_t l = layers; l-- > 0;) {
      const std::int64_t in = kWidths[l], out = kWidths[l + 1];
      std::vector<double> dz(da.size()), below(static_cast<std::size_t>(kRows * in), 0.0);
      for (std::size_t k = 0; k < dz.size(); ++k) dz[k] = z[l][k] > 0 ? da[k] : 0.0;
      for (std::int64_t r = 0; r < kRows; ++r)
        for (std::int64_t i = 0; i < in; ++i)
          for (std::int64_t j = 0; j < out; ++j)
            below[static_cast<std::size_t>(r * in + i)] +=
                dz[static_cast<std::size_t>(r * out + j)] * w[l][static_cast<std::size_t>(i * out + j)];
      for (std::int64_t j = 0; j < out; ++j) {
        double db = 0;
        for (std::int64_t r = 0; r < kRows; ++r) db += dz[static_cast<std::size_t>(r * out + j)];
        b[l][static_cast<std::size_t>(j)] -= kRate * db;
        for (std::int64_t i = 0; i < in; ++i) {
          double dw = 0;
          for (std::int64_t r = 0; r < kRows; ++r)
            dw += a[l][static_cast<std::size_t>(r * in + i)] * dz[static_cast<std::size_t>(r * out + j)];
          w[l][static_cast<std::size_t>(i * out + j)] -= kRate * dw;
        }
      }
      da = std::move(below);
    }
    dx = std::move(da);
  }
};

void expect_near(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-5 + 1e-4 * std::abs(want)) << what;
}

class DenseTowerMpi : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(DenseTowerMpi, EqualsOneProcessOnEveryPartitioning) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const auto [p0, p1] = GetParam();
  const auto dim = [](int p) { return p == 1 ? PartitionDim::kFeature : PartitionDim::kData; };
  DenseTower tower(world, kWidths[0], {{kWidths[1], dim(p0)}, {kWidths[2], dim(p1)}}, kSeed, kRate);
  Reference reference;
  const SampleShare mine = sample_share_of(kRows, world.rank(), world.size());
  const std::int64_t out = kWidths.back(), in = kWidths.front();
  const std::string where = "partition_dim " + std::to_string(p0) + ", " + std::to_string(p1) + " on " +
                            std::to_string(world.size()) + " ranks, rank " + std::to_string(world.rank());
  for (int step = 0; step < kSteps; ++step) {
    std::vector<float> x;
    for (std::int64_t r = mine.first; r < mine.first + mine.count; ++r)
      for (std::int64_t i = 0; i < in; ++i) x.push_back(static_cast<float>(input_value(r, i)));
    const std::vector<float> y = tower.forward(x, kRows);
    ASSERT_EQ(y.size(), static_cast<std::size_t>(mine.count * out)) << where;
    std::vector<float> grad(y.size());
    for (std::int64_t r = 0; r < mine.count; ++r)
      for (std::int64_t j = 0; j < out; ++j) {
        const auto k = static_cast<std::size_t>(r * out + j);
        grad[k] = static_cast<float>((y[k] - target_value(mine.first + r, j)) / kRows);
      }
    const std::vector<float> dx = tower.backward(grad);
    reference.step();
    ASSERT_EQ(dx.size(), static_cast<std::size_t>(mine.count * in)) << where;
    for (std::int64_t r = 0; r < mine.count; ++r) {
      for (std::int64_t j = 0; j < out; ++j)
        expect_near(y[static_cast<std::size_t>(r * out + j)],
                    reference.y[static_cast<std::size_t>((mine.first + r) * out + j)], where + ": output");
      for (std::int64_t i = 0; i < in; ++i)
        expect_near(dx[static_cast<std::size_t>(r * in + i)],
                    reference.dx[static_cast<std::size_t>((mine.first + r) * in + i)], where + ": input gradient");
    }
  }
  for (std::size_t l = 0; l < tower.layers(); ++l) {
    const DenseLayer& layer = tower.layer(l);
    const std::int64_t outputs = kWidths[l + 1];
    for (std::int64_t i = 0; i < kWidths[l]; ++i)
      for (std::int64_t j = 0; j < layer.outputs_here(); ++j)
        expect_near(layer.weights()[static_cast<std::size_t>(i * layer.outputs_here() + j)],
                    reference.w[l][static_cast<std::size_t>(i * outputs + layer.first_output() + j)],
                    where + ": W of layer " + std::to_string(l));
    for (std::int64_t j = 0; j < layer.outputs_here(); ++j)
      expect_near(layer.bias()[static_cast<std::size_t>(j)],
                  reference.b[l][static_cast<std::size_t>(layer.first_output() + j)],
                  where + ": b of layer " + std::to_string(l));
  }
}

INSTANTIATE_TEST_SUITE_P(Partitionings, DenseTowerMpi,
                         ::testing::Values(std::pair{0, 0}, std::pair{0, 1}, std::pair{1, 0}, std::pair{1, 1}),
                         [](const auto& test) {
                           return "data" + std::to_string(test.param.first) + "_" + std::to_string(test.param.second);
                         });

}  // namespace
}  // namespace embscale::model
