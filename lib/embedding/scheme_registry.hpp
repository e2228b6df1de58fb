// The schemes by name: the one list a new scheme is added to (lib/embedding/README.md, "Adding a
// scheme"). A layer's scheme is the entry whose `config_type` is the layer's type (HugeCTR's and
// SOK's layer types name their scheme), or, for a "ShardedEmbedding" layer, whose `name` is its
// "sharding" (any scheme's name: TorchRec's shardings have no other type; the rest may be named
// either way, so that one sweep over `sharding` covers every scheme).
#pragma once

#include <span>
#include <string>

#include "config/config.hpp"
#include "embedding/scheme.hpp"

namespace embscale::embedding {

struct SchemeEntry {
  const char* name;          // the scheme's name in reports (the `scheme` run attribute)
  const char* config_type;   // the layer type that selects it, or "ShardedEmbedding"
  const char* origin;        // who defines it (for --help and the README)
  SchemeFactory make;
  // Throws InputError naming the field when the scheme cannot run this layer on `ranks` ranks;
  // null when it always can.
  void (*check)(const LayerSpec& spec, int ranks) = nullptr;
};

std::span<const SchemeEntry> schemes();
// The entry of a layer; InputError naming layers[<name>].type or .sharding (with the names that
// run) when none matches.
const SchemeEntry& scheme_of(const config::EmbeddingLayer& layer);

}  // namespace embscale::embedding
