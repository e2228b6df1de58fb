// DenseGraph (lib/model/dense_graph.hpp) on 1, 2 and 4 ranks against one process holding the whole
// batch, in double: three training steps (forward, backward, the gradients' allreduce, Adam) of
// models shaped like HugeCTR's samples (DLRM's interaction, DCN's cross network with a slice,
// WDL's wide-and-deep add, a feature-parallel InnerProduct), on random inputs of a fixed seed:
// every rank's loss share sums to the whole batch's loss, its inputs' gradients are the rows the
// whole batch's backward gives them, and the replicated parameters end equal.
#include <gtest/gtest.h>

#include <mpi.h>

#include <random>

#include "comm/mpi_communicator.hpp"
#include "config/config.hpp"
#include "core/batch_source.hpp"
#include "core/error.hpp"
#include "model/dense_graph.hpp"
#include "model/dense_optimizer.hpp"

namespace embscale::model {
namespace {

using nlohmann::json;

constexpr std::int64_t kBatch = 13;  // uneven shares on 2 and 4 ranks

// A config with two embedding layers (emb_a: 3 slots of dim 4, emb_b: 1 slot of dim 1), 5 dense
// features and a label, and `dense` as its dense layers.
config::Config model_config(const json& dense) {
  json layers = json::array();
  layers.push_back({{"name", "data"},
                    {"type", "Data"},
                    {"format", "Synthetic"},
                    {"slot_size_array", {100, 100, 100, 100}},
                    {"label", {{"top", "label"}, {"label_dim", 1}}},
                    {"dense", {{"top", "dense"}, {"dense_dim", 4}}},
                    {"sparse", {{{"top", "deep"}, {"slot_num", 3}}, {{"top", "wide"}, {"slot_num", 1}}}}});
  for (const auto& [name, bottom, dim] : {std::tuple{"emb_a", "deep", 4}, std::tuple{"emb_b", "wide", 1}})
    layers.push_back({{"name", name},
                      {"type", "DistributedSlotSparseEmbeddingHash"},
                      {"bottom", bottom},
                      {"top", name},
                      {"sparse_embedding_hparam",
                       {{"max_vocabulary_size_per_gpu", 400}, {"embedding_vec_size", dim}, {"combiner", "sum"}}}});
  for (const auto& l : dense) layers.push_back(l);
  const json config = {{"schema_version", 1},
                       {"solver", {{"batchsize", kBatch}, {"max_iter", 3}}},
                       {"optimizer", {{"type", "Adam"}, {"adam_hparam", {{"learning_rate", 0.01}}}}},
                       {"layers", layers}};
  return config::parse_config(config, "test.json");
}

json fc(const char* name, const char* bottom, int out, int partition = 0) {
  return {{"name", name},
          {"type", "InnerProduct"},
          {"bottom", bottom},
          {"top", name},
          {"fc_param", {{"num_output", out}}},
          {"partition_dim", partition}};
}
json unary(const char* name, const char* type, const char* bottom, json params = json::object()) {
  json j = {{"name", name}, {"type", type}, {"bottom", bottom}, {"top", name}};
  for (auto& [k, v] : params.items()) j[k] = v;
  return j;
}
json nary(const char* name, const char* type, std::vector<std::string> bottoms) {
  return {{"name", name}, {"type", type}, {"bottom", bottoms}, {"top", name}};
}
json loss(const char* bottom) {
  return {{"name", "loss"},
          {"type", "BinaryCrossEntropyLoss"},
          {"bottom", {bottom, "label"}},
          {"top", "loss"},
          {"regularizer", "L2"},
          {"lambda", 0.01}};
}

// DLRM: a bottom MLP on the dense features, the interaction with emb_a, a top MLP (its middle
// layer feature-parallel), then emb_b added to the logit (WDL's wide part).
json dlrm_wdl() {
  return json::array({fc("bot1", "dense", 6), unary("bot_relu", "ReLU", "bot1"), fc("bot2", "bot_relu", 4),
                      nary("inter", "Interaction", {"bot2", "emb_a"}), fc("top1", "inter", 8),
                      unary("top_elu", "ELU", "top1", {{"elu_param", {{"alpha", 1.0}}}}), fc("top2", "top_elu", 5, 1),
                      unary("top_sig", "Sigmoid", "top2"), fc("logit", "top_sig", 1),
                      unary("wide_flat", "Reshape", "emb_b", {{"leading_dim", 1}}),
                      nary("sum", "Add", {"logit", "wide_flat"}), loss("sum")});
}

// DCN: the embeddings reshaped and joined with the dense features, sliced twice: the cross
// network on one copy, an MLP with dropout on the other, joined again.
json dcn() {
  return json::array({unary("flat", "Reshape", "emb_a", {{"leading_dim", 12}}),
                      nary("joined", "Concat", {"flat", "dense"}),
                      {{"name", "two"},
                       {"type", "Slice"},
                       {"bottom", "joined"},
                       {"top", {"s1", "s2"}},
                       {"ranges", {{0, 16}, {0, 16}}}},
                      unary("cross", "MultiCross", "s1", {{"mc_param", {{"num_layers", 2}}}}),
                      {{"name", "mlp"},
                       {"type", "FusedInnerProduct"},
                       {"bottom", "s2"},
                       {"top", "mlp"},
                       {"fc_param", {{"num_output", 7}}}},
                      unary("drop", "Dropout", "mlp", {{"rate", 0.25}}),
                      nary("both", "Concat", {"drop", "cross"}),
                      fc("logit", "both", 1),
                      loss("logit")});
}

// Sample s's values of every input, the same on every rank.
void fill_inputs(DenseGraph<double>& graph, const config::Config& config, SampleShare rows, int step) {
  for (const char* name : {"emb_a", "emb_b", "dense", "label"}) {
    Blob<double>& blob = graph.input(name);
    blob.value.clear();
    for (std::int64_t s = rows.first; s < rows.first + rows.count; ++s) {
      std::mt19937_64 rng(static_cast<std::uint64_t>(s * 1000 + step * 7) ^ std::hash<std::string>{}(name));
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      for (std::int64_t e = 0; e < blob.shape.elements(); ++e)
        blob.value.push_back(std::string(name) == "label" ? static_cast<double>(rng() % 2) : u(rng));
    }
  }
  (void)config;
}

struct StepResult {
  double loss = 0;
  std::vector<double> emb_grad;  // emb_a's gradient, the rows held
};

std::vector<StepResult> train(comm::Communicator& comm, const config::Config& config) {
  DenseGraph<double> graph(config, graph_inputs(config), 99, &comm);
  DenseOptimizer<double> optimizer(config.optimizer);
  const SampleShare rows = sample_share_of(kBatch, comm.rank(), comm.size());
  std::vector<StepResult> results;
  for (int step = 1; step <= 3; ++step) {
    fill_inputs(graph, config, rows, step);
    const StepInfo info{rows.count, kBatch, rows.first, step, true};
    StepResult r;
    r.loss = comm.allreduce(graph.forward(info), comm::ReduceOp::kSum);
    graph.backward(info);
    graph.reduce_gradients(info);
    r.emb_grad = graph.input("emb_a").grad;
    optimizer.apply(graph.parameters(), step);
    results.push_back(r);
  }
  const auto params = graph.parameters().values(ParameterSharing::kReplicated);
  results.push_back({0, std::vector<double>(params.begin(), params.end())});
  return results;
}

void expect_ranks_equal_one_process(const json& dense) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  comm::MpiCommunicator self(MPI_COMM_SELF);
  const config::Config config = model_config(dense);
  const auto whole = train(self, config);
  const auto mine = train(world, config);
  const SampleShare rows = sample_share_of(kBatch, world.rank(), world.size());
  const std::size_t per_row = 3 * 4;
  for (std::size_t s = 0; s < 3; ++s) {
    EXPECT_NEAR(mine[s].loss, whole[s].loss, 1e-12) << "step " << s + 1;
    ASSERT_EQ(mine[s].emb_grad.size(), static_cast<std::size_t>(rows.count) * per_row);
    for (std::size_t k = 0; k < mine[s].emb_grad.size(); ++k)
      EXPECT_NEAR(mine[s].emb_grad[k], whole[s].emb_grad[static_cast<std::size_t>(rows.first) * per_row + k], 1e-12);
  }
  ASSERT_EQ(mine[3].emb_grad.size(), whole[3].emb_grad.size());
  for (std::size_t k = 0; k < mine[3].emb_grad.size(); ++k)
    EXPECT_NEAR(mine[3].emb_grad[k], whole[3].emb_grad[k], 1e-10) << "replicated parameter " << k;
  EXPECT_GT(whole[0].loss, whole[2].loss * 0.0);  // a loss was computed
}

TEST(DenseGraph, DlrmWithWidePartOnAnyRanksEqualsOneProcess) { expect_ranks_equal_one_process(dlrm_wdl()); }

TEST(DenseGraph, DcnOnAnyRanksEqualsOneProcess) { expect_ranks_equal_one_process(dcn()); }

TEST(DenseGraph, RefusesTwoOutputsWithoutALoss) {
  comm::MpiCommunicator self(MPI_COMM_SELF);
  const auto config = model_config(json::array({fc("a", "dense", 2), fc("b", "dense", 3)}));
  try {
    DenseGraph<float> graph(config, graph_inputs(config), 1, &self);
    ADD_FAILURE() << "two unread tops accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("\"a\", \"b\""), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace embscale::model
