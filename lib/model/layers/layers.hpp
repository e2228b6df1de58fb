// The makers of the dense layer types (one file each in this folder), for layer_registry.cpp.
// Each reads its parameters from the layer's object, checks its bottoms' shapes (an InputError
// naming the layer and what it expected) and returns the layer. Internal to lib/model.
#pragma once

#include <memory>

#include "model/dense_op.hpp"

namespace embscale::model::layers {

#define EMBSCALE_DENSE_LAYER_MAKER(name) \
  template <typename T> std::unique_ptr<DenseOp<T>> name(const LayerBuild<T>& build);

EMBSCALE_DENSE_LAYER_MAKER(make_inner_product)
EMBSCALE_DENSE_LAYER_MAKER(make_fused_inner_product)
EMBSCALE_DENSE_LAYER_MAKER(make_relu)
EMBSCALE_DENSE_LAYER_MAKER(make_elu)
EMBSCALE_DENSE_LAYER_MAKER(make_sigmoid)
EMBSCALE_DENSE_LAYER_MAKER(make_dropout)
EMBSCALE_DENSE_LAYER_MAKER(make_reshape)
EMBSCALE_DENSE_LAYER_MAKER(make_concat)
EMBSCALE_DENSE_LAYER_MAKER(make_slice)
EMBSCALE_DENSE_LAYER_MAKER(make_add)
EMBSCALE_DENSE_LAYER_MAKER(make_elementwise_multiply)
EMBSCALE_DENSE_LAYER_MAKER(make_reduce_sum)
EMBSCALE_DENSE_LAYER_MAKER(make_fm_order2)
EMBSCALE_DENSE_LAYER_MAKER(make_weight_multiply)
EMBSCALE_DENSE_LAYER_MAKER(make_interaction)
EMBSCALE_DENSE_LAYER_MAKER(make_multi_cross)
EMBSCALE_DENSE_LAYER_MAKER(make_binary_cross_entropy_loss)

#undef EMBSCALE_DENSE_LAYER_MAKER

// InnerProduct and FusedInnerProduct with partition_dim 1 (each rank its share of the outputs).
template <typename T>
std::unique_ptr<DenseOp<T>> make_feature_parallel_inner_product(const LayerBuild<T>& build, std::int64_t outputs,
                                                                bool relu);

}  // namespace embscale::model::layers
