#include "run/dense_objective.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <span>

#include "core/atomic_file.hpp"
#include "core/byte_io.hpp"
#include "core/checksum.hpp"
#include "core/error.hpp"
#include "core/file_input.hpp"
#include "core/hash.hpp"
#include "core/temp_files.hpp"
#include "embedding/regression_objective.hpp"
#include "model/blas.hpp"
#include "model/dense_graph.hpp"
#include "model/dense_optimizer.hpp"

namespace embscale::run {

struct DenseModel::Parts {
  Parts(comm::Communicator& comm, const config::Config& config)
      : graph(config, model::graph_inputs(config), hash_combine(config.solver.seed, 0xde45e70e4ULL), &comm),
        optimizer(config.optimizer) {}
  model::DenseGraph<float> graph;
  model::DenseOptimizer<float> optimizer;
};

DenseModel::DenseModel(comm::Communicator& comm, const config::Config& config)
    : parts_(std::make_unique<Parts>(comm, config)), comm_(comm), config_(config) {}

DenseModel::~DenseModel() = default;

bool DenseModel::has_loss_layer() const { return parts_->graph.has_loss(); }

void DenseModel::set_inputs(const Batch& batch, std::span<const std::span<const float>> pooled) {
  auto& graph = parts_->graph;
  const auto set = [](model::Blob<float>& blob, std::span<const float> values) {
    blob.value.assign(values.begin(), values.end());
  };
  for (std::size_t i = 0; i < pooled.size(); ++i) set(graph.input(config_.embeddings[i].top), pooled[i]);
  if (!config_.data.dense_top.empty()) set(graph.input(config_.data.dense_top), batch.dense);
  if (!config_.data.label_top.empty()) set(graph.input(config_.data.label_top), batch.labels);
}

double DenseModel::step(const Batch& batch, std::span<const std::span<const float>> pooled,
                        std::span<const std::span<float>> grad, embedding::StepRecorder& recorder) {
  auto& graph = parts_->graph;
  const bool held = server_held_by_trainers_ > 0;
  recorder.begin_layer("", std::span(kDensePhases).first(held ? 3 : std::size(kDensePhases)), {&comm_});
  const model::StepInfo info{batch.num_samples, config_.solver.batchsize, batch.first_sample, ++steps_, true};
  set_inputs(batch, pooled);
  double loss = graph.forward(info);
  recorder.lap("dense_forward");
  if (!graph.has_loss()) {  // the stand-in regression on the model's output
    auto& out = graph.output();
    out.grad.resize(out.value.size());
    loss = embedding::regression_loss_and_gradient_per_sample(batch, out.value, out.shape.elements(),
                                                              config_.solver.batchsize, out.grad);
  }
  recorder.lap("loss");
  graph.backward(info);
  for (std::size_t i = 0; i < grad.size(); ++i) {
    const auto& g = graph.input(config_.embeddings[i].top).grad;
    std::copy(g.begin(), g.end(), grad[i].begin());
  }
  recorder.lap("dense_backward");
  if (held) {
    graph.add_regularizer_gradient(info, 1.0 / server_held_by_trainers_);
    return loss;
  }
  graph.reduce_gradients(info);
  recorder.lap("dense_allreduce");
  parts_->optimizer.apply(graph.parameters(), info.step);
  recorder.lap("dense_update");
  return loss;
}

void DenseModel::hold_parameters_on_servers(int trainers) {
  EMBSCALE_EXPECTS(trainers >= 1, "at least one trainer");
  EMBSCALE_EXPECTS(parts_->graph.parameters().count(model::ParameterSharing::kLocal) == 0,
                   "a parameter server holds replicated dense parameters only (no feature-parallel layer)");
  server_held_by_trainers_ = trainers;
}

std::span<float> DenseModel::replicated_values() {
  return parts_->graph.parameters().values(model::ParameterSharing::kReplicated);
}

std::span<const float> DenseModel::replicated_gradients() {
  return parts_->graph.parameters().grads(model::ParameterSharing::kReplicated);
}

std::span<const float> DenseModel::last_logits() const {
  if (!parts_->graph.has_loss()) return {};
  return parts_->graph.logits().value;
}

DenseModel::Scores DenseModel::evaluate(const Batch& batch, std::span<const std::span<const float>> pooled,
                                        std::int64_t global_rows) {
  auto& graph = parts_->graph;
  EMBSCALE_EXPECTS(graph.has_loss(), "evaluation scores the loss layer's logits (check_evaluation)");
  set_inputs(batch, pooled);
  const model::StepInfo info{batch.num_samples, global_rows, batch.first_sample, steps_, false};
  Scores scores;
  scores.loss = graph.forward(info) - graph.regularizer_penalty(global_rows);  // the loss of the samples alone
  const auto& logits = graph.logits().value;
  scores.logits.assign(logits.begin(), logits.end());
  return scores;
}

namespace {

// The dense state file: "EMBSDNS1", u32 version 1, u32 array count, i64 steps, then per array a u64
// count and its floats, then the XXH64 (core/checksum.hpp) of every byte before it.
constexpr char kDenseMagic[8] = {'E', 'M', 'B', 'S', 'D', 'N', 'S', '1'};
constexpr std::uint32_t kDenseVersion = 1;

}  // namespace

void DenseModel::save_state(const std::filesystem::path& path) {
  auto& parameters = parts_->graph.parameters();
  std::vector<std::vector<float>*> arrays;
  std::vector<float> replicated(parameters.values(model::ParameterSharing::kReplicated).begin(),
                                parameters.values(model::ParameterSharing::kReplicated).end());
  std::vector<float> local(parameters.values(model::ParameterSharing::kLocal).begin(),
                           parameters.values(model::ParameterSharing::kLocal).end());
  arrays.push_back(&replicated);
  arrays.push_back(&local);
  for (auto* state : parts_->optimizer.state()) arrays.push_back(state);
  std::vector<std::byte> bytes;
  put_bytes(bytes, kDenseMagic, sizeof kDenseMagic);
  put<std::uint32_t>(bytes, kDenseVersion);
  put<std::uint32_t>(bytes, static_cast<std::uint32_t>(arrays.size()));
  put<std::int64_t>(bytes, steps_);
  for (const auto* array : arrays) {
    put<std::uint64_t>(bytes, array->size());
    put_bytes(bytes, array->data(), array->size() * sizeof(float));
  }
  Checksum64 checksum;
  checksum.update(bytes);
  put<std::uint64_t>(bytes, checksum.value());
  check_file_can_be_created(path, "the dense model's checkpoint");
  AtomicFile out(path);
  out.write(bytes);
  out.commit();
}

bool DenseModel::has_local_parameters() const {
  return parts_->graph.parameters().count(model::ParameterSharing::kLocal) > 0;
}

void DenseModel::load_state(const std::filesystem::path& path) {
  FileInput in(path, "the dense model's checkpoint");
  const std::uint64_t size = in.size();
  if (size < sizeof kDenseMagic + 24)
    throw InputError(path.string() + ": " + std::to_string(size) + " bytes, too short for a dense model's checkpoint");
  const std::byte* all = in.take(static_cast<std::size_t>(size), "the file");
  ByteReader r(std::span<const std::byte>(all, static_cast<std::size_t>(size)), in.name());
  const std::byte* magic = r.take(sizeof kDenseMagic, "magic");
  if (std::memcmp(magic, kDenseMagic, sizeof kDenseMagic) != 0)
    r.fail(0, "magic", "\"EMBSDNS1\" (a dense model's checkpoint)", quoted_bytes(magic, sizeof kDenseMagic));
  Checksum64 checksum;
  checksum.update(all, static_cast<std::size_t>(size) - 8);
  std::uint64_t stored = 0;
  std::memcpy(&stored, all + size - 8, 8);
  if (stored != checksum.value())
    r.fail(size - 8, "checksum", hex(checksum.value()) + " (the XXH64 of the bytes before it)", hex(stored));
  if (const auto version = r.read<std::uint32_t>("version"); version != kDenseVersion)
    r.fail(8, "version", std::to_string(kDenseVersion), std::to_string(version));
  auto& parameters = parts_->graph.parameters();
  const auto optimizer_state = parts_->optimizer.state();
  const std::uint32_t count = r.read<std::uint32_t>("array count");
  if (count != 2 + optimizer_state.size())
    r.fail(12, "array count", std::to_string(2 + optimizer_state.size()), std::to_string(count));
  const std::int64_t steps = r.read<std::int64_t>("steps");
  std::vector<std::vector<float>> arrays(count);
  for (std::uint32_t a = 0; a < count; ++a) {
    const std::uint64_t at = r.offset();
    const auto n = r.read<std::uint64_t>("array " + std::to_string(a) + " count");
    if (n > r.left() / sizeof(float))
      r.fail(at, "array " + std::to_string(a) + " count", "the floats left", std::to_string(n));
    arrays[a].resize(static_cast<std::size_t>(n));
    std::memcpy(arrays[a].data(), r.take(static_cast<std::size_t>(n) * sizeof(float), "array"), n * sizeof(float));
  }
  const auto replicated = parameters.values(model::ParameterSharing::kReplicated);
  const auto local = parameters.values(model::ParameterSharing::kLocal);
  if (arrays[0].size() != replicated.size() || arrays[1].size() != local.size())
    throw InputError(path.string() + ": holds " + std::to_string(arrays[0].size()) + " replicated and " +
                     std::to_string(arrays[1].size()) + " local dense parameters; this model has " +
                     std::to_string(replicated.size()) + " and " + std::to_string(local.size()) +
                     ": not the checkpoint of this config's dense layers on this rank");
  std::copy(arrays[0].begin(), arrays[0].end(), replicated.begin());
  std::copy(arrays[1].begin(), arrays[1].end(), local.begin());
  for (std::size_t i = 0; i < optimizer_state.size(); ++i) *optimizer_state[i] = std::move(arrays[2 + i]);
  steps_ = steps;
}

std::shared_ptr<DenseModel> attach_dense_model(comm::Communicator& comm, const config::Config& config,
                                               embedding::EmbeddingEngine& engine) {
  if (config.dense_layers.empty()) return nullptr;
  // An MPI run puts a rank on every core: the BLAS runs on the rank's own thread.
  model::set_blas_threads(1);
  auto model = std::make_shared<DenseModel>(comm, config);
  engine.set_model_objective([model](const Batch& batch, std::span<const std::span<const float>> pooled,
                                     std::span<const std::span<float>> grad, embedding::StepRecorder& recorder) {
    return model->step(batch, pooled, grad, recorder);
  });
  return model;
}

}  // namespace embscale::run
