// The dense layer types lib/model builds: each type's maker, in float (the run) and double (the
// tests). A new layer is one file in layers/ (its class and its make_* function, declared in
// layers.hpp) and one line in layer_registry.cpp; config::hugectr::built_dense_layer_types lists
// the same names (tests/model/layer_registry_test.cpp holds the two lists equal).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/dense_op.hpp"

namespace embscale::model {

template <typename T> using LayerMaker = std::unique_ptr<DenseOp<T>> (*)(const LayerBuild<T>&);

struct LayerEntry {
  std::string type;  // HugeCTR's name: "InnerProduct", "ReLU", ...
  LayerMaker<float> make_float;
  LayerMaker<double> make_double;
  bool loss = false;  // its maker returns a LossOp

  template <typename T> LayerMaker<T> maker() const {
    if constexpr (std::is_same_v<T, float>) return make_float;
    else return make_double;
  }
};

const std::vector<LayerEntry>& layer_registry();
// The entry of `type`, or null.
const LayerEntry* find_layer(std::string_view type);

}  // namespace embscale::model
