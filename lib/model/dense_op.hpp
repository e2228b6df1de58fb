// The dense side of the model as layers over tensors (HugeCTR's dense layers): what a layer is
// given, what it computes, and where its parameters live. One layer type is one file in
// layers/ plus a line in layers/layer_registry.cpp; DenseGraph (dense_graph.hpp) wires them.
//
// A tensor holds one row per sample of this rank's share of the batch (data-parallel: each rank
// its samples), each row a SampleShape: HugeCTR's 2D [batch, width] or 3D [batch, slots, width]
// (an embedding layer's output). Every layer is written for float and double (T): the run uses
// float, the tests check each layer in double against finite differences.
//
// The contract of a layer:
//   forward  reads its bottoms' values, writes its tops' values (every element);
//   backward reads its tops' gradients (and any values), ADDS the gradient of each bottom into
//            that bottom's grad (a tensor read by several layers sums their gradients; the graph
//            zeroes every grad before a backward) and WRITES its parameters' gradients: sums over
//            this rank's rows of the loss's gradient (the loss already divides by the global
//            batch), which the graph then sums over ranks where a parameter is replicated.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "config/config.hpp"

namespace embscale::model {

// One sample's part of a tensor: `rows` rows of `width` values. A 3D tensor [batch, slots, width]
// (an embedding layer's output) has rows = slots; a 2D tensor [batch, width] one row, or several
// when a Reshape to a leading_dim below a sample's values made it [batch x rows, width] (DeepFM
// reshapes [batch, 26, 11] to [batch x 26, 11] to slice each slot's vector). Either way a sample's
// values are contiguous, so the batch stays split by samples.
struct SampleShape {
  std::int64_t rows = 1;
  std::int64_t width = 0;
  bool three_d = false;
  std::int64_t elements() const noexcept { return rows * width; }
  std::string describe() const;  // "[batch, 416]", "[batch, 26, 16]", "[batch x 26, 11]"
  friend bool operator==(const SampleShape&, const SampleShape&) = default;
};

template <typename T> struct Blob {
  SampleShape shape;
  std::vector<T> value;  // rows x shape.elements(), row-major
  std::vector<T> grad;   // as value
};

// What a step tells its layers.
struct StepInfo {
  std::int64_t rows = 0;         // samples this rank holds
  std::int64_t global_rows = 0;  // samples of the global batch
  std::int64_t first_row = 0;    // global index of this rank's first sample
  std::int64_t step = 0;         // 1-based training step (a Dropout mask is a function of it)
  bool training = true;          // false: evaluation (Dropout passes its input through)
};

// Where a parameter's copies live and how its gradient completes.
enum class ParameterSharing {
  kReplicated,  // every rank the same copy (data-parallel): its gradient is summed over ranks
  kLocal,       // this rank's own part (a feature-parallel layer's columns): complete on this rank
};

struct ParameterHandle {
  ParameterSharing sharing = ParameterSharing::kReplicated;
  std::size_t offset = 0;  // in its sharing's flat buffer
  std::size_t count = 0;
};

// Every layer's parameters in two flat buffers (replicated, local) with their gradients beside:
// a step's replicated gradients are summed over ranks in one allreduce, and the optimizer runs
// over each buffer as one array. Layers declare while they are built; allocate() then gives them
// storage (a graph built only to check a config never allocates).
template <typename T> class ParameterStore {
 public:
  // `regularized`: the loss layer's regularizer applies to it (HugeCTR: weights, not biases).
  ParameterHandle declare(std::size_t count, ParameterSharing sharing, bool regularized);
  void allocate();
  bool allocated() const noexcept { return allocated_; }

  std::span<T> values(const ParameterHandle& h) {
    return std::span<T>(buffer(h.sharing).values).subspan(h.offset, h.count);
  }
  std::span<const T> values(const ParameterHandle& h) const {
    return std::span<const T>(buffer(h.sharing).values).subspan(h.offset, h.count);
  }
  std::span<T> grads(const ParameterHandle& h) {
    return std::span<T>(buffer(h.sharing).grads).subspan(h.offset, h.count);
  }
  std::span<T> values(ParameterSharing sharing) { return buffer(sharing).values; }
  std::span<T> grads(ParameterSharing sharing) { return buffer(sharing).grads; }
  std::span<const T> values(ParameterSharing sharing) const { return buffer(sharing).values; }
  const std::vector<ParameterHandle>& regularized() const noexcept { return regularized_; }
  std::size_t count(ParameterSharing sharing) const noexcept { return buffer(sharing).declared; }

 private:
  struct Buffer {
    std::size_t declared = 0;
    std::vector<T> values, grads;
  };
  Buffer& buffer(ParameterSharing s) { return s == ParameterSharing::kReplicated ? replicated_ : local_; }
  const Buffer& buffer(ParameterSharing s) const { return s == ParameterSharing::kReplicated ? replicated_ : local_; }
  Buffer replicated_, local_;
  std::vector<ParameterHandle> regularized_;
  bool allocated_ = false;
};

// What a layer is built from.
template <typename T> struct LayerBuild {
  const config::DenseLayerNode& node;  // its name, tensors and object (its parameters)
  const std::string& origin;           // the config, for messages (config::Config::origin)
  std::vector<SampleShape> bottoms;    // its bottoms' shapes, in node.bottoms' order
  std::size_t index = 0;               // its position among the dense layers
  std::uint64_t seed = 0;              // this layer's seed (initial weights, Dropout's masks)
  int rank = 0, ranks = 1;             // of the communicator it runs over
  comm::Communicator* comm = nullptr;  // null when the graph is built only to check a config
  ParameterStore<T>& parameters;
};

template <typename T> class DenseOp {
 public:
  virtual ~DenseOp() = default;
  // One per name in node.tops (the graph checks the count).
  virtual std::vector<SampleShape> top_shapes() const = 0;
  // After the store's allocate(): the parameters' first values (a pure function of the layer's
  // seed and each element's global position, so every partitioning starts from the same model).
  virtual void initialize() {}
  virtual void forward(std::span<const Blob<T>* const> bottoms, std::span<Blob<T>* const> tops,
                       const StepInfo& step) = 0;
  virtual void backward(std::span<Blob<T>* const> bottoms, std::span<const Blob<T>* const> tops,
                        const StepInfo& step) = 0;
};

// A loss layer (BinaryCrossEntropyLoss): forward writes each sample's loss divided by the global
// batch into its one top ([batch, 1]); backward needs no top gradient (the loss starts it).
enum class Regularizer { kNone, kL1, kL2 };
template <typename T> class LossOp : public DenseOp<T> {
 public:
  // The penalty the graph adds over the store's regularized parameters: lambda times |w| (L1)
  // or w^2 / 2 (L2) summed, divided by the global batch as HugeCTR does (its gradient follows).
  virtual Regularizer regularizer() const noexcept { return Regularizer::kNone; }
  virtual double lambda() const noexcept { return 0.0; }
};

}  // namespace embscale::model
