// Every dense layer of lib/model/layers, in double: forward against a plain reference written here
// (a different formula where one exists: FmOrder2 by pairs, BinaryCrossEntropyLoss by its
// logarithms), backward against central finite differences of sum(c * top) for random c, on
// random inputs with fixed seeds; then the float build against the double one.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "model/dense_layer_harness.hpp"
#include "model/dense_op.hpp"

namespace embscale::model {
namespace {

using nlohmann::json;
using testing::LayerHarness;

constexpr double kExact = 1e-12;

json layer(const char* type, json bottom, json top, json params = json::object()) {
  json j = {{"name", "l"}, {"type", type}, {"bottom", bottom}, {"top", top}};
  for (auto& [k, v] : params.items()) j[k] = v;
  return j;
}

TEST(DenseLayers, InnerProductIsXWPlusB) {
  LayerHarness<double> h(layer("InnerProduct", "x", "y", {{"fc_param", {{"num_output", 5}}}}), {{1, 7, false}}, 4);
  h.forward();
  const auto w = h.parameters().values(ParameterSharing::kReplicated);  // W (7 x 5) then b (5)
  for (int r = 0; r < 4; ++r)
    for (int j = 0; j < 5; ++j) {
      double y = w[35 + j];
      for (int i = 0; i < 7; ++i) y += h.bottom(0).value[r * 7 + i] * w[i * 5 + j];
      EXPECT_NEAR(h.top(0).value[r * 5 + j], y, kExact);
    }
  h.expect_gradients_match();
}

TEST(DenseLayers, InnerProductOnRowsOfAReshapedSample) {
  LayerHarness<double> h(layer("InnerProduct", "x", "y", {{"fc_param", {{"num_output", 3}}}}), {{4, 6, false}}, 3);
  EXPECT_EQ(h.op().top_shapes().front(), (SampleShape{4, 3, false}));
  h.expect_gradients_match();
}

TEST(DenseLayers, FusedInnerProductIsReluOfInnerProduct) {
  LayerHarness<double> fused(layer("FusedInnerProduct", "x", "y", {{"fc_param", {{"num_output", 6}}}}), {{1, 5, false}},
                             5);
  LayerHarness<double> plain(layer("InnerProduct", "x", "y", {{"fc_param", {{"num_output", 6}}}}), {{1, 5, false}}, 5);
  fused.forward();
  plain.forward();
  int clamped = 0;
  for (std::size_t k = 0; k < fused.top(0).value.size(); ++k) {
    EXPECT_EQ(fused.top(0).value[k], std::max(0.0, plain.top(0).value[k]));
    clamped += plain.top(0).value[k] < 0;
  }
  EXPECT_GT(clamped, 0);  // the test covers both sides of the ReLU
  fused.expect_gradients_match();
}

TEST(DenseLayers, ActivationsAgainstTheirFormulas) {
  for (const char* type : {"ReLU", "ELU", "Sigmoid"}) {
    json params = std::string(type) == "ELU" ? json{{"elu_param", {{"alpha", 0.7}}}} : json::object();
    LayerHarness<double> h(layer(type, "x", "y", params), {{3, 4, true}}, 3);
    h.forward();
    for (std::size_t k = 0; k < h.bottom(0).value.size(); ++k) {
      const double x = h.bottom(0).value[k];
      const double expected = std::string(type) == "ReLU"  ? std::max(x, 0.0)
                              : std::string(type) == "ELU" ? (x > 0 ? x : 0.7 * (std::exp(x) - 1))
                                                           : 1 / (1 + std::exp(-x));
      EXPECT_NEAR(h.top(0).value[k], expected, kExact) << type;
    }
    h.expect_gradients_match();
  }
}

TEST(DenseLayers, DropoutKeepsOneMinusRateScaledAndPassesThroughInEvaluation) {
  LayerHarness<double> h(layer("Dropout", "x", "y", {{"rate", 0.3}}), {{1, 100, false}}, 200);
  h.forward();
  int kept = 0;
  for (std::size_t k = 0; k < h.top(0).value.size(); ++k) {
    const double y = h.top(0).value[k], x = h.bottom(0).value[k];
    ASSERT_TRUE(y == 0.0 || std::abs(y - x / 0.7) < kExact);
    kept += y != 0.0;
  }
  // 20,000 draws of p = 0.7: within 5 standard deviations (65).
  EXPECT_NEAR(kept, 14000, 5 * std::sqrt(20000 * 0.7 * 0.3));
  h.step().training = false;
  h.forward();
  EXPECT_EQ(h.top(0).value, h.bottom(0).value);
  LayerHarness<double> small(layer("Dropout", "x", "y", {{"rate", 0.3}}), {{1, 10, false}}, 4);
  small.expect_gradients_match();
}

TEST(DenseLayers, DropoutMaskFollowsTheSampleNotTheRank) {
  // Samples 10..19 as a rank's share (first_row 10) meet the masks they meet in the whole batch.
  LayerHarness<double> whole(layer("Dropout", "x", "y", {{"dropout_rate", 0.5}}), {{1, 8, false}}, 20);
  LayerHarness<double> part(layer("Dropout", "x", "y", {{"dropout_rate", 0.5}}), {{1, 8, false}}, 10, 7,
                            StepInfo{0, 20, 10, 1, true});
  for (int k = 0; k < 80; ++k) part.bottom(0).value[k] = whole.bottom(0).value[80 + k];
  whole.forward();
  part.forward();
  for (int k = 0; k < 80; ++k) EXPECT_EQ(part.top(0).value[k], whole.top(0).value[80 + k]);
}

TEST(DenseLayers, ReshapeConcatSliceMoveValuesByIndex) {
  LayerHarness<double> reshape(layer("Reshape", "x", "y", {{"leading_dim", 4}}), {{3, 8, true}}, 2);
  EXPECT_EQ(reshape.op().top_shapes().front(), (SampleShape{6, 4, false}));
  reshape.forward();
  EXPECT_EQ(reshape.top(0).value, reshape.bottom(0).value);
  reshape.expect_gradients_match();

  LayerHarness<double> concat(layer("Concat", json::array({"a", "b"}), "y"), {{1, 3, false}, {1, 2, false}}, 4);
  concat.forward();
  for (int r = 0; r < 4; ++r)
    for (int j = 0; j < 5; ++j)
      EXPECT_EQ(concat.top(0).value[r * 5 + j],
                j < 3 ? concat.bottom(0).value[r * 3 + j] : concat.bottom(1).value[r * 2 + j - 3]);
  concat.expect_gradients_match();

  LayerHarness<double> slots(layer("Concat", json::array({"a", "b"}), "y"), {{2, 3, true}, {1, 3, true}}, 3);
  EXPECT_EQ(slots.op().top_shapes().front(), (SampleShape{3, 3, true}));
  slots.forward();
  for (int r = 0; r < 3; ++r)
    for (int e = 0; e < 9; ++e)
      EXPECT_EQ(slots.top(0).value[r * 9 + e],
                e < 6 ? slots.bottom(0).value[r * 6 + e] : slots.bottom(1).value[r * 3 + e - 6]);
  slots.expect_gradients_match();

  LayerHarness<double> widths(layer("Concat", json::array({"a", "b"}), "y", {{"axis", 2}}),
                              {{2, 3, true}, {2, 1, true}}, 2);
  EXPECT_EQ(widths.op().top_shapes().front(), (SampleShape{2, 4, true}));
  widths.expect_gradients_match();

  // Overlapping ranges, as HugeCTR's samples duplicate a tensor: both gradients sum.
  LayerHarness<double> slice(layer("Slice", "x", json::array({"p", "q"}), {{"ranges", {{0, 4}, {2, 6}}}}),
                             {{2, 6, false}}, 3);
  slice.forward();
  for (int i = 0; i < 6; ++i)
    for (int e = 0; e < 4; ++e) {
      EXPECT_EQ(slice.top(0).value[i * 4 + e], slice.bottom(0).value[i * 6 + e]);
      EXPECT_EQ(slice.top(1).value[i * 4 + e], slice.bottom(0).value[i * 6 + 2 + e]);
    }
  slice.expect_gradients_match();
}

TEST(DenseLayers, AddMultiplyAndReduceSum) {
  LayerHarness<double> add(layer("Add", json::array({"a", "b", "c"}), "y"),
                           {{1, 4, false}, {1, 4, false}, {1, 4, false}}, 3);
  add.forward();
  for (int k = 0; k < 12; ++k)
    EXPECT_NEAR(add.top(0).value[k], add.bottom(0).value[k] + add.bottom(1).value[k] + add.bottom(2).value[k], kExact);
  add.expect_gradients_match();

  LayerHarness<double> mul(layer("ElementwiseMultiply", json::array({"a", "b", "c"}), "y"),
                           {{1, 4, false}, {1, 4, false}, {1, 4, false}}, 3);
  mul.bottom(1).value[2] = 0.0;  // an exact zero factor: the others' gradients stay exact
  mul.forward();
  for (int k = 0; k < 12; ++k)
    EXPECT_NEAR(mul.top(0).value[k], mul.bottom(0).value[k] * mul.bottom(1).value[k] * mul.bottom(2).value[k], kExact);
  mul.expect_gradients_match();

  LayerHarness<double> width(layer("ReduceSum", "x", "y", {{"axis", 1}}), {{1, 5, false}}, 3);
  width.forward();
  for (int r = 0; r < 3; ++r) {
    double sum = 0;
    for (int e = 0; e < 5; ++e) sum += width.bottom(0).value[r * 5 + e];
    EXPECT_NEAR(width.top(0).value[r], sum, kExact);
  }
  width.expect_gradients_match();
  LayerHarness<double> slots(layer("ReduceSum", "x", "y", {{"axis", 1}}), {{3, 2, true}}, 2);
  EXPECT_EQ(slots.op().top_shapes().front(), (SampleShape{1, 2, true}));
  slots.forward();
  EXPECT_NEAR(slots.top(0).value[1], slots.bottom(0).value[1] + slots.bottom(0).value[3] + slots.bottom(0).value[5],
              kExact);
  slots.expect_gradients_match();
  LayerHarness<double> inner(layer("ReduceSum", "x", "y", {{"axis", 2}}), {{3, 2, true}}, 2);
  EXPECT_EQ(inner.op().top_shapes().front(), (SampleShape{3, 1, true}));
  inner.expect_gradients_match();
}

TEST(DenseLayers, FmOrder2IsTheSumOverPairs) {
  LayerHarness<double> h(layer("FmOrder2", "x", "y", {{"out_dim", 3}}), {{1, 12, false}}, 4);  // 4 slots of 3
  h.forward();
  for (int r = 0; r < 4; ++r)
    for (int j = 0; j < 3; ++j) {
      double pairs = 0;
      for (int s = 0; s < 4; ++s)
        for (int t = s + 1; t < 4; ++t)
          pairs += h.bottom(0).value[r * 12 + s * 3 + j] * h.bottom(0).value[r * 12 + t * 3 + j];
      EXPECT_NEAR(h.top(0).value[r * 3 + j], pairs, kExact);
    }
  h.expect_gradients_match();
}

TEST(DenseLayers, WeightMultiplyScalesEachValuesRow) {
  LayerHarness<double> h(layer("Multiply", "x", "y", {{"weight_dims", {3, 2}}}), {{1, 3, false}}, 4);
  h.forward();
  const auto w = h.parameters().values(ParameterSharing::kReplicated);
  for (int r = 0; r < 4; ++r)
    for (int s = 0; s < 3; ++s)
      for (int t = 0; t < 2; ++t)
        EXPECT_NEAR(h.top(0).value[r * 6 + s * 2 + t], h.bottom(0).value[r * 3 + s] * w[s * 2 + t], kExact);
  h.expect_gradients_match();
}

TEST(DenseLayers, InteractionIsTheMlpThenEveryPairsDotThenPadding) {
  const int d = 4, slots = 3, rows = 2;
  LayerHarness<double> h(layer("Interaction", json::array({"mlp", "emb"}), "y"), {{1, d, false}, {slots, d, true}},
                         rows);
  const int width = d + 4 * 3 / 2 + 1;
  EXPECT_EQ(h.op().top_shapes().front(), (SampleShape{1, width, false}));
  h.forward();
  for (int r = 0; r < rows; ++r) {
    const auto v = [&](int i, int e) {
      return i == 0 ? h.bottom(0).value[r * d + e] : h.bottom(1).value[(r * slots + i - 1) * d + e];
    };
    const double* y = h.top(0).value.data() + r * width;
    for (int e = 0; e < d; ++e) EXPECT_EQ(y[e], v(0, e));
    int at = d;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < i; ++j) {
        double dot = 0;
        for (int e = 0; e < d; ++e) dot += v(i, e) * v(j, e);
        EXPECT_NEAR(y[at++], dot, kExact) << "pair " << i << "," << j;
      }
    EXPECT_EQ(y[width - 1], 0.0);
  }
  h.expect_gradients_match();
}

TEST(DenseLayers, MultiCrossFollowsTheCrossNetworkRecurrence) {
  const int d = 5, layers = 3, rows = 3;
  LayerHarness<double> h(layer("MultiCross", "x", "y", {{"mc_param", {{"num_layers", layers}}}}), {{1, d, false}},
                         rows);
  const auto p = h.parameters().values(ParameterSharing::kReplicated);                   // per layer: w (d), then b (d)
  for (std::size_t k = 0; k < p.size(); ++k) p[k] += 0.01 * static_cast<double>(k % 7);  // a non-zero bias
  h.forward();
  for (int r = 0; r < rows; ++r) {
    std::vector<double> x0(h.bottom(0).value.begin() + r * d, h.bottom(0).value.begin() + (r + 1) * d), x = x0;
    for (int l = 0; l < layers; ++l) {
      double s = 0;
      for (int e = 0; e < d; ++e) s += x[e] * p[l * 2 * d + e];
      for (int e = 0; e < d; ++e) x[e] = x0[e] * s + x[e] + p[l * 2 * d + d + e];
    }
    for (int e = 0; e < d; ++e) EXPECT_NEAR(h.top(0).value[r * d + e], x[e], 1e-12);
  }
  h.expect_gradients_match();
}

TEST(DenseLayers, BinaryCrossEntropyIsTheMeanLogLoss) {
  LayerHarness<double> h(layer("BinaryCrossEntropyLoss", json::array({"logit", "label"}), "loss"),
                         {{1, 1, false}, {1, 1, false}}, 6, 7, StepInfo{0, 12, 0, 1, true});
  for (int r = 0; r < 6; ++r) {
    h.bottom(0).value[r] *= 20.0;                       // logits far into both tails
    h.bottom(1).value[r] = static_cast<double>(r % 2);  // labels
  }
  h.forward();
  for (int r = 0; r < 6; ++r) {
    const double x = h.bottom(0).value[r], y = h.bottom(1).value[r];
    const double p = 1 / (1 + std::exp(-x));
    EXPECT_NEAR(h.top(0).value[r], -(y * std::log(p) + (1 - y) * std::log(1 - p)) / 12.0, 1e-9);
  }
  h.use_sum_objective();
  h.expect_gradients_match(1e-6, 1e-6, /*skip_bottom=*/1);  // labels take no gradient
}

TEST(DenseLayers, FloatBuildAgreesWithDouble) {
  const json fc = layer("FusedInnerProduct", "x", "y", {{"fc_param", {{"num_output", 16}}}});
  LayerHarness<double> d(fc, {{1, 32, false}}, 8);
  LayerHarness<float> f(fc, {{1, 32, false}}, 8);
  d.backward();
  f.backward();
  for (std::size_t k = 0; k < d.top(0).value.size(); ++k) EXPECT_NEAR(f.top(0).value[k], d.top(0).value[k], 1e-5);
  for (std::size_t k = 0; k < d.bottom(0).grad.size(); ++k) EXPECT_NEAR(f.bottom(0).grad[k], d.bottom(0).grad[k], 1e-5);
}

TEST(DenseLayers, BadParametersAndShapesNameTheLayer) {
  const auto refused = [](const json& j, std::vector<SampleShape> shapes, const std::string& expected) {
    try {
      LayerHarness<double> h(j, std::move(shapes), 2);
      ADD_FAILURE() << "accepted " << j.dump();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("layers[l]"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  refused(layer("InnerProduct", "x", "y", {{"fc_param", {{"num_output", 2}}}}), {{3, 4, true}}, "Reshape");
  refused(layer("InnerProduct", "x", "y", {{"fc_param", {{"num_outputs", 2}}}}), {{1, 4, false}}, "num_output");
  refused(layer("Dropout", "x", "y", {{"rate", 1.0}}), {{1, 4, false}}, "rate");
  refused(layer("Reshape", "x", "y", {{"leading_dim", 5}}), {{3, 4, true}}, "must divide");
  refused(layer("Concat", json::array({"a", "b"}), "y"), {{1, 4, false}, {2, 4, false}}, "rows per sample");
  refused(layer("Slice", "x", json::array({"p"}), {{"ranges", {{0, 9}}}}), {{1, 4, false}}, "ranges");
  refused(layer("Interaction", json::array({"a", "b"}), "y"), {{1, 4, false}, {3, 5, true}}, "one size");
  refused(layer("BinaryCrossEntropyLoss", json::array({"a", "b"}), "y"), {{1, 2, false}, {1, 1, false}}, "logits");
  refused(layer("BinaryCrossEntropyLoss", json::array({"a", "b"}), "y", {{"lambda", 0.1}}),
          {{1, 1, false}, {1, 1, false}}, "regularizer");
  refused(layer("Add", json::array({"a", "b"}), "y"), {{1, 4, false}, {1, 3, false}}, "one shape");
  refused(layer("FmOrder2", "x", "y", {{"out_dim", 5}}), {{1, 12, false}}, "must divide");
}

}  // namespace
}  // namespace embscale::model
