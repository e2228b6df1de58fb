// The dense layer after embeddings, data-parallel or feature-parallel (lib/model/dense_layer.hpp,
// SINGA's hybrid parallelism), against a single-process reference in double on 1, 2 and 4 ranks: the embeddings'
// output arrives data-parallel (each rank its samples), the connection gives the dense layer its
// input, three SGD steps of a squared loss run, and each step's outputs, the gradient that
// reaches the embeddings (each rank its samples' rows) and the final W and b must match.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "comm/mpi_communicator.hpp"
#include "core/batch_source.hpp"
#include "model/connections.hpp"
#include "model/dense_layer.hpp"

namespace embscale::model {
namespace {

constexpr std::int64_t kRows = 10, kIn = 6;
constexpr std::uint64_t kSeed = 77;
constexpr float kRate = 0.2f;
constexpr int kSteps = 3;

double input_value(std::int64_t r, std::int64_t i) {
  return std::sin(0.7 * static_cast<double>(r) + 1.3 * static_cast<double>(i));
}
double target_value(std::int64_t r, std::int64_t j) { return 0.3 * std::cos(static_cast<double>(r * 3 + j)); }

// One process, the whole batch, in double.
struct Reference {
  std::int64_t outputs;
  std::vector<double> w, b;
  std::vector<double> y, dx;  // the last step's outputs and input gradient

  explicit Reference(std::int64_t out)
      : outputs(out), w(static_cast<std::size_t>(kIn * out)), b(static_cast<std::size_t>(out), 0.0) {
    for (std::int64_t i = 0; i < kIn; ++i)
      for (std::int64_t j = 0; j < out; ++j)
        w[static_cast<std::size_t>(i * out + j)] = initial_weight(kSeed, i, j, kIn, out);
  }
  void step() {
    const auto at = [&](std::int64_t r, std::int64_t j) { return static_cast<std::size_t>(r * outputs + j); };
    y.assign(static_cast<std::size_t>(kRows * outputs), 0.0);
    std::vector<double> g(y.size());
    for (std::int64_t r = 0; r < kRows; ++r)
      for (std::int64_t j = 0; j < outputs; ++j) {
        double v = b[static_cast<std::size_t>(j)];
        for (std::int64_t i = 0; i < kIn; ++i) v += input_value(r, i) * w[static_cast<std::size_t>(i * outputs + j)];
        y[at(r, j)] = std::max(v, 0.0);
        g[at(r, j)] = v > 0 ? (y[at(r, j)] - target_value(r, j)) / kRows : 0.0;
      }
    dx.assign(static_cast<std::size_t>(kRows * kIn), 0.0);
    for (std::int64_t r = 0; r < kRows; ++r)
      for (std::int64_t i = 0; i < kIn; ++i)
        for (std::int64_t j = 0; j < outputs; ++j)
          dx[static_cast<std::size_t>(r * kIn + i)] += g[at(r, j)] * w[static_cast<std::size_t>(i * outputs + j)];
    for (std::int64_t j = 0; j < outputs; ++j) {
      double db = 0;
      for (std::int64_t r = 0; r < kRows; ++r) db += g[at(r, j)];
      b[static_cast<std::size_t>(j)] -= kRate * db;
      for (std::int64_t i = 0; i < kIn; ++i) {
        double dw = 0;
        for (std::int64_t r = 0; r < kRows; ++r) dw += input_value(r, i) * g[at(r, j)];
        w[static_cast<std::size_t>(i * outputs + j)] -= kRate * dw;
      }
    }
  }
};

void expect_near(double got, double want, const std::string& where) {
  EXPECT_NEAR(got, want, 1e-5 * (1.0 + std::fabs(want))) << where;
}

TEST(DenseLayer, DataAndFeatureParallelAfterEmbeddingsMatchOneProcess) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const int me = world.rank(), P = world.size();
  const SampleShare mine = sample_share_of(kRows, me, P);
  std::vector<float> my_rows;  // the embeddings' output: this rank's samples, data-parallel
  for (std::int64_t r = mine.first; r < mine.first + mine.count; ++r)
    for (std::int64_t i = 0; i < kIn; ++i) my_rows.push_back(static_cast<float>(input_value(r, i)));
  // 3 outputs on 4 ranks: one rank holds none of the feature-parallel layer's outputs.
  for (const std::int64_t outputs : {5, 3})
    for (const PartitionDim partition : {PartitionDim::kData, PartitionDim::kFeature}) {
      const std::string what = std::string(partition == PartitionDim::kData ? "data" : "feature") + "-parallel, " +
                               std::to_string(outputs) + " outputs, rank " + std::to_string(me) + " of " +
                               std::to_string(P);
      const BlobShape shape{kRows, kIn};
      DenseLayer dense(world, kIn, outputs, partition, kSeed, kRate);
      Reference reference(outputs);
      for (int step = 0; step < kSteps; ++step) {
        reference.step();
        const auto input =
            connect_forward(world, shape, PartitionDim::kData, partition, Connection::kOneToAll, my_rows);
        const std::int64_t rows = partition == PartitionDim::kData ? mine.count : kRows;
        const std::int64_t first_row = partition == PartitionDim::kData ? mine.first : 0;
        const auto y = dense.forward(input, rows);
        const auto cols = dense.outputs_here();
        ASSERT_EQ(y.size(), static_cast<std::size_t>(rows * cols)) << what;
        std::vector<float> grad(y.size());
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t c = 0; c < cols; ++c) {
            const std::int64_t j = dense.first_output() + c;
            const auto k = static_cast<std::size_t>(r * cols + c);
            expect_near(y[k], reference.y[static_cast<std::size_t>((first_row + r) * outputs + j)],
                        what + ", step " + std::to_string(step) + ": y");
            grad[k] = static_cast<float>((y[k] - target_value(first_row + r, j)) / kRows);
          }
        const auto dx_input = dense.backward(grad);
        const auto dx = connect_backward(world, shape, PartitionDim::kData, partition, Connection::kOneToAll, dx_input);
        ASSERT_EQ(dx.size(), static_cast<std::size_t>(mine.count * kIn)) << what;
        for (std::int64_t r = 0; r < mine.count; ++r)
          for (std::int64_t i = 0; i < kIn; ++i)
            expect_near(dx[static_cast<std::size_t>(r * kIn + i)],
                        reference.dx[static_cast<std::size_t>((mine.first + r) * kIn + i)],
                        what + ", step " + std::to_string(step) + ": the embeddings' gradient");
      }
      for (std::int64_t i = 0; i < kIn; ++i)
        for (std::int64_t c = 0; c < dense.outputs_here(); ++c)
          expect_near(dense.weights()[static_cast<std::size_t>(i * dense.outputs_here() + c)],
                      reference.w[static_cast<std::size_t>(i * outputs + dense.first_output() + c)], what + ": W");
      for (std::int64_t c = 0; c < dense.outputs_here(); ++c)
        expect_near(dense.bias()[static_cast<std::size_t>(c)],
                    reference.b[static_cast<std::size_t>(dense.first_output() + c)], what + ": b");
    }
}

}  // namespace
}  // namespace embscale::model
