// InnerProduct with partition_dim 1 (SINGA's feature partitioning): each rank holds its share of
// W's columns and b (sample_share_of(out, rank, P)) and computes them for every sample of the
// batch. The connections where the partitionings meet (lib/model/connections.hpp) sit inside the
// layer, so it reads and writes data-parallel tensors like every other layer:
//   forward   Split -> Concate: every rank the whole [G, in]; y_mine = x W_mine + b_mine [G, my
//             columns]; Slice -> Concate back to rows: [my samples, out]
//   backward  the reverse Slice -> Concate: dy_mine [G, my columns]; dW_mine = x^T dy_mine, db_mine;
//             dx = dy_mine W_mine^T, every rank's copy of [G, in] summed into its rows
// W element (i, j) starts where the data-parallel layer's does, so both partitionings train one
// model. Its parameters are local: their gradients are complete on each rank.
#include <algorithm>

#include "core/batch_source.hpp"
#include "model/blas.hpp"
#include "model/connections.hpp"
#include "model/layers/initializers.hpp"
#include "model/layers/layer_support.hpp"
#include "model/layers/layers.hpp"

namespace embscale::model::layers {
namespace {

template <typename T> class FeatureParallelInnerProduct final : public DenseOp<T> {
 public:
  FeatureParallelInnerProduct(const LayerBuild<T>& build, std::int64_t outputs, bool relu)
      : comm_(build.comm), store_(build.parameters), seed_(build.seed), in_(build.bottoms[0].width), out_(outputs),
        columns_(sample_share_of(outputs, build.rank, build.ranks)), relu_(relu),
        weights_(store_.declare(static_cast<std::size_t>(in_ * columns_.count), ParameterSharing::kLocal, true)),
        bias_(store_.declare(static_cast<std::size_t>(columns_.count), ParameterSharing::kLocal, true)) {}

  std::vector<SampleShape> top_shapes() const override { return {{1, out_, false}}; }

  void initialize() override {
    const std::span<T> w = store_.values(weights_), b = store_.values(bias_);
    for (std::int64_t i = 0; i < in_; ++i)
      for (std::int64_t j = 0; j < columns_.count; ++j)
        w[static_cast<std::size_t>(i * columns_.count + j)] = static_cast<T>(
            normal_value(seed_, ParameterStream::kWeight, static_cast<std::uint64_t>(i * out_ + columns_.first + j),
                         fc_weight_stddev(in_, out_)));
    for (std::int64_t j = 0; j < columns_.count; ++j)
      b[static_cast<std::size_t>(j)] = static_cast<T>(normal_value(
          seed_, ParameterStream::kBias, static_cast<std::uint64_t>(columns_.first + j), fc_bias_stddev(out_)));
  }

  void forward(std::span<const Blob<T>* const> bottoms, std::span<Blob<T>* const> tops, const StepInfo& step) override {
    global_rows_ = step.global_rows;
    x_all_ = connect_forward<T>(*comm_, {global_rows_, in_}, PartitionDim::kData, PartitionDim::kFeature,
                                Connection::kOneToAll, bottoms[0]->value);
    y_mine_.resize(static_cast<std::size_t>(global_rows_ * columns_.count));
    const std::span<const T> b = store_.values(bias_);
    for (std::int64_t r = 0; r < global_rows_; ++r) std::copy(b.begin(), b.end(), y_mine_.begin() + r * columns_.count);
    gemm<T>(Transpose::kNo, Transpose::kNo, global_rows_, columns_.count, in_, T(1), x_all_.data(), in_,
            store_.values(weights_).data(), columns_.count, T(1), y_mine_.data(), columns_.count);
    if (relu_)
      for (T& v : y_mine_) v = v > T(0) ? v : T(0);
    tops[0]->value = connect_forward<T>(*comm_, {global_rows_, out_}, PartitionDim::kFeature, PartitionDim::kData,
                                        Connection::kOneToOne, y_mine_);
  }

  void backward(std::span<Blob<T>* const> bottoms, std::span<const Blob<T>* const> tops, const StepInfo&) override {
    const Blob<T>& y = *tops[0];
    std::vector<T> dy(y.grad.begin(), y.grad.end());
    if (relu_)  // no gradient where ReLU clamped the output
      for (std::size_t k = 0; k < dy.size(); ++k)
        if (!(y.value[k] > T(0))) dy[k] = T(0);
    const std::vector<T> dy_mine = connect_backward<T>(*comm_, {global_rows_, out_}, PartitionDim::kFeature,
                                                       PartitionDim::kData, Connection::kOneToOne, dy);
    gemm<T>(Transpose::kYes, Transpose::kNo, in_, columns_.count, global_rows_, T(1), x_all_.data(), in_,
            dy_mine.data(), columns_.count, T(0), store_.grads(weights_).data(), columns_.count);
    const std::span<T> db = store_.grads(bias_);
    std::fill(db.begin(), db.end(), T(0));
    for (std::int64_t r = 0; r < global_rows_; ++r)
      for (std::int64_t j = 0; j < columns_.count; ++j)
        db[static_cast<std::size_t>(j)] += dy_mine[static_cast<std::size_t>(r * columns_.count + j)];
    dx_all_.resize(x_all_.size());
    gemm<T>(Transpose::kNo, Transpose::kYes, global_rows_, in_, columns_.count, T(1), dy_mine.data(), columns_.count,
            store_.values(weights_).data(), columns_.count, T(0), dx_all_.data(), in_);
    const std::vector<T> dx = connect_backward<T>(*comm_, {global_rows_, in_}, PartitionDim::kData,
                                                  PartitionDim::kFeature, Connection::kOneToAll, dx_all_);
    for (std::size_t k = 0; k < dx.size(); ++k) bottoms[0]->grad[k] += dx[k];
  }

 private:
  comm::Communicator* comm_;
  ParameterStore<T>& store_;
  std::uint64_t seed_;
  std::int64_t in_, out_;
  SampleShare columns_;
  bool relu_;
  ParameterHandle weights_, bias_;
  std::int64_t global_rows_ = 0;            // of the last forward
  std::vector<T> x_all_, y_mine_, dx_all_;  // the whole input, my columns of the output, the input's gradient copy
};

}  // namespace

template <typename T>
std::unique_ptr<DenseOp<T>> make_feature_parallel_inner_product(const LayerBuild<T>& build, std::int64_t outputs,
                                                                bool relu) {
  expect_one_row(build, 0);  // the connections split the batch by rows, one per sample
  return std::make_unique<FeatureParallelInnerProduct<T>>(build, outputs, relu);
}

template std::unique_ptr<DenseOp<float>> make_feature_parallel_inner_product(const LayerBuild<float>&, std::int64_t,
                                                                             bool);
template std::unique_ptr<DenseOp<double>> make_feature_parallel_inner_product(const LayerBuild<double>&, std::int64_t,
                                                                              bool);

}  // namespace embscale::model::layers
