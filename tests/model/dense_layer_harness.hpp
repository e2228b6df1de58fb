// A dense layer (lib/model/layers) built alone for a test: its config object, its bottoms' shapes
// and values, its parameters; forward, backward against a fixed upstream gradient, and central
// finite differences of the scalar sum(c * top) it defines, in double.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/dense_op.hpp"
#include "model/layers/layer_registry.hpp"

namespace embscale::model::testing {

template <typename T> class LayerHarness {
 public:
  // `layer`: the config object (name, type, bottom, top, parameters); `bottoms`: their shapes.
  LayerHarness(const nlohmann::json& layer, std::vector<SampleShape> shapes, std::int64_t rows, std::uint64_t seed = 7,
               StepInfo step = {})
      : rows_(rows) {
    node_.name = layer.at("name");
    node_.type = layer.at("type");
    node_.path = "layers[" + node_.name + "]";
    node_.json = layer;
    const auto names = [](const nlohmann::json& j) {
      return j.is_string() ? std::vector<std::string>{j.get<std::string>()} : j.get<std::vector<std::string>>();
    };
    node_.bottoms = names(layer.at("bottom"));
    node_.tops = names(layer.at("top"));
    const LayerEntry* entry = find_layer(node_.type);
    if (!entry) throw std::runtime_error("no layer " + node_.type);
    const LayerBuild<T> build{node_, origin_, shapes, 0, seed, 0, 1, nullptr, store_};
    op_ = entry->maker<T>()(build);
    store_.allocate();
    op_->initialize();
    step_ = step;
    step_.rows = rows;
    if (step_.global_rows == 0) step_.global_rows = rows;
    if (step_.step == 0) step_.step = 1;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (const SampleShape& s : shapes) {
      bottoms_.push_back(std::make_unique<Blob<T>>());
      bottoms_.back()->shape = s;
      for (std::int64_t k = 0; k < rows * s.elements(); ++k) bottoms_.back()->value.push_back(static_cast<T>(u(rng)));
    }
    for (const SampleShape& s : op_->top_shapes()) {
      tops_.push_back(std::make_unique<Blob<T>>());
      tops_.back()->shape = s;
      tops_.back()->value.resize(static_cast<std::size_t>(rows * s.elements()));
      std::vector<T> c;
      for (std::int64_t k = 0; k < rows * s.elements(); ++k) c.push_back(static_cast<T>(u(rng)));
      coefficients_.push_back(c);
    }
  }

  Blob<T>& bottom(std::size_t i) { return *bottoms_.at(i); }
  Blob<T>& top(std::size_t i) { return *tops_.at(i); }
  DenseOp<T>& op() { return *op_; }
  ParameterStore<T>& parameters() { return store_; }
  StepInfo& step() { return step_; }
  // The loss layer is its own objective: sum of its top (coefficients 1).
  void use_sum_objective() {
    for (auto& c : coefficients_) std::fill(c.begin(), c.end(), T(1));
  }

  void forward() { op_->forward(bottom_views(), top_views(), step_); }
  // sum over tops of c * top, after a forward.
  double objective() {
    forward();
    double sum = 0;
    for (std::size_t t = 0; t < tops_.size(); ++t)
      for (std::size_t k = 0; k < tops_[t]->value.size(); ++k)
        sum += static_cast<double>(coefficients_[t][k]) * static_cast<double>(tops_[t]->value[k]);
    return sum;
  }
  // Forward, then backward with dtop = c: bottoms' grads (zeroed first) and the parameters'.
  void backward() {
    forward();
    for (auto& b : bottoms_) b->grad.assign(b->value.size(), T(0));
    for (std::size_t t = 0; t < tops_.size(); ++t) tops_[t]->grad = coefficients_[t];
    std::vector<const Blob<T>*> tops(tops_.size());
    for (std::size_t t = 0; t < tops_.size(); ++t) tops[t] = tops_[t].get();
    std::vector<Blob<T>*> bottoms(bottoms_.size());
    for (std::size_t b = 0; b < bottoms_.size(); ++b) bottoms[b] = bottoms_[b].get();
    op_->backward(bottoms, tops, step_);
  }

  // Every analytic derivative (the bottoms' but `skip_bottom`'s, and the parameters') against
  // central differences with step h: |analytic - numeric| <= tolerance (1 + |numeric|).
  void expect_gradients_match(double h = 1e-6, double tolerance = 1e-6, int skip_bottom = -1) {
    backward();
    std::vector<std::vector<T>> analytic;
    for (auto& b : bottoms_) analytic.push_back(b->grad);
    const std::vector<T> param_grads(store_.grads(ParameterSharing::kReplicated).begin(),
                                     store_.grads(ParameterSharing::kReplicated).end());
    const auto numeric = [&](T& x) {
      const T saved = x;
      x = saved + static_cast<T>(h);
      const double plus = objective();
      x = saved - static_cast<T>(h);
      const double minus = objective();
      x = saved;
      return (plus - minus) / (2 * h);
    };
    for (std::size_t b = 0; b < bottoms_.size(); ++b) {
      if (static_cast<int>(b) == skip_bottom) continue;
      for (std::size_t k = 0; k < bottoms_[b]->value.size(); ++k) {
        const double n = numeric(bottoms_[b]->value[k]);
        ASSERT_NEAR(static_cast<double>(analytic[b][k]), n, tolerance * (1 + std::abs(n)))
            << node_.type << ": bottom " << b << " element " << k;
      }
    }
    const std::span<T> params = store_.values(ParameterSharing::kReplicated);
    for (std::size_t k = 0; k < params.size(); ++k) {
      const double n = numeric(params[k]);
      ASSERT_NEAR(static_cast<double>(param_grads[k]), n, tolerance * (1 + std::abs(n)))
          << node_.type << ": parameter " << k;
    }
  }

 private:
  std::vector<const Blob<T>*> bottom_views() {
    std::vector<const Blob<T>*> v;
    for (auto& b : bottoms_) v.push_back(b.get());
    return v;
  }
  std::vector<Blob<T>*> top_views() {
    std::vector<Blob<T>*> v;
    for (auto& t : tops_) v.push_back(t.get());
    return v;
  }

  std::string origin_ = "test.json";
  config::DenseLayerNode node_;
  ParameterStore<T> store_;
  std::unique_ptr<DenseOp<T>> op_;
  std::int64_t rows_;
  StepInfo step_;
  std::vector<std::unique_ptr<Blob<T>>> bottoms_, tops_;
  std::vector<std::vector<T>> coefficients_;
};

}  // namespace embscale::model::testing
