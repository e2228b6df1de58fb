#include "model/layers/layer_registry.hpp"

#include <algorithm>

#include "model/layers/layers.hpp"

namespace embscale::model {
namespace {

#define EMBSCALE_LAYER(type, maker, loss) \
  LayerEntry { type, layers::maker<float>, layers::maker<double>, loss }

}  // namespace

const std::vector<LayerEntry>& layer_registry() {
  static const std::vector<LayerEntry> entries = {
      EMBSCALE_LAYER("InnerProduct", make_inner_product, false),
      EMBSCALE_LAYER("FusedInnerProduct", make_fused_inner_product, false),
      EMBSCALE_LAYER("ReLU", make_relu, false),
      EMBSCALE_LAYER("ELU", make_elu, false),
      EMBSCALE_LAYER("Sigmoid", make_sigmoid, false),
      EMBSCALE_LAYER("Dropout", make_dropout, false),
      EMBSCALE_LAYER("Reshape", make_reshape, false),
      EMBSCALE_LAYER("Concat", make_concat, false),
      EMBSCALE_LAYER("Slice", make_slice, false),
      EMBSCALE_LAYER("Add", make_add, false),
      EMBSCALE_LAYER("ElementwiseMultiply", make_elementwise_multiply, false),
      EMBSCALE_LAYER("ReduceSum", make_reduce_sum, false),
      EMBSCALE_LAYER("FmOrder2", make_fm_order2, false),
      EMBSCALE_LAYER("WeightMultiply", make_weight_multiply, false),
      EMBSCALE_LAYER("Multiply", make_weight_multiply, false),  // HugeCTR's samples' name for it
      EMBSCALE_LAYER("Interaction", make_interaction, false),
      EMBSCALE_LAYER("MultiCross", make_multi_cross, false),
      EMBSCALE_LAYER("BinaryCrossEntropyLoss", make_binary_cross_entropy_loss, true),
  };
  return entries;
}

#undef EMBSCALE_LAYER

const LayerEntry* find_layer(std::string_view type) {
  const auto& entries = layer_registry();
  const auto it = std::find_if(entries.begin(), entries.end(), [&](const LayerEntry& e) { return e.type == type; });
  return it == entries.end() ? nullptr : &*it;
}

}  // namespace embscale::model
