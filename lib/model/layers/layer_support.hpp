// What the layers of layers/ share: reading the layer's object and failing with its path, the
// checks of bottom and top counts and shapes, and element-wise loops. Internal to lib/model.
#pragma once

#include <cstddef>
#include <string>

#include "config/json_reader.hpp"
#include "core/error.hpp"
#include "model/dense_op.hpp"

namespace embscale::model::layers {

// The layer's object, for its parameters (errors name the config and the layer's path).
template <typename T> config::ObjectReader reader_of(const LayerBuild<T>& build) {
  return config::ObjectReader(config::ValueReader(build.node.json, build.node.path, build.origin));
}

// "<origin>: <layer path>: <message>" as an InputError.
template <typename T> [[noreturn]] void fail(const LayerBuild<T>& build, const std::string& message) {
  throw InputError(build.origin + ": " + build.node.path + ": " + message);
}

// Exactly `bottoms` bottoms and `tops` tops (0: any number of at least one).
template <typename T> void expect_tensors(const LayerBuild<T>& build, std::size_t bottoms, std::size_t tops) {
  const auto& node = build.node;
  if (bottoms != 0 && node.bottoms.size() != bottoms)
    fail(build, "\"" + node.type + "\" reads " + std::to_string(bottoms) + " bottom" + (bottoms == 1 ? "" : "s") +
                    ", got " + std::to_string(node.bottoms.size()));
  if (tops != 0 && node.tops.size() != tops)
    fail(build, "\"" + node.type + "\" writes " + std::to_string(tops) + " top" + (tops == 1 ? "" : "s") + ", got " +
                    std::to_string(node.tops.size()));
}

// Bottom `i` must be 2D.
template <typename T> void expect_2d(const LayerBuild<T>& build, std::size_t i) {
  if (build.bottoms[i].three_d)
    fail(build, "\"" + build.node.type + "\" reads a 2D tensor [batch, width]; its bottom \"" + build.node.bottoms[i] +
                    "\" is " + build.bottoms[i].describe() + " (a Reshape makes it 2D)");
}

// Bottom `i` must be [batch, width]: 2D with one row per sample.
template <typename T> void expect_one_row(const LayerBuild<T>& build, std::size_t i) {
  const SampleShape& s = build.bottoms[i];
  if (s.three_d || s.rows != 1)
    fail(build, "\"" + build.node.type + "\" reads a tensor [batch, width]; its bottom \"" + build.node.bottoms[i] +
                    "\" is " + s.describe() + " (a Reshape with leading_dim " + std::to_string(s.elements()) +
                    " makes it one)");
}

// Every bottom has bottom 0's shape.
template <typename T> void expect_same_shapes(const LayerBuild<T>& build) {
  for (std::size_t k = 1; k < build.bottoms.size(); ++k)
    if (!(build.bottoms[k] == build.bottoms[0]))
      fail(build, "its bottoms must have one shape: \"" + build.node.bottoms[0] + "\" is " +
                      build.bottoms[0].describe() + ", \"" + build.node.bottoms[k] + "\" is " +
                      build.bottoms[k].describe());
}

}  // namespace embscale::model::layers
