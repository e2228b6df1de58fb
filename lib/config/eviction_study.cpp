// The "eviction" section: which dynamic tables the eviction study measures, against which
// oracles, how often it samples the recalls (lib/sim/README.md defines every figure).
#include <algorithm>
#include <string>
#include <vector>

#include "config/sections.hpp"
#include "core/error.hpp"

namespace embscale::config {
namespace {

// Why a layer cannot be measured ("" when it can): the study compares score eviction with
// oracles of the same capacity, which a static table (it never evicts) and hybrid mode (a key's
// tier is fixed by its hash, not by its score) do not have.
std::string unmeasurable(const EmbeddingLayer& layer) {
  if (!layer.storage.dynamic) return "its storage is static: it holds every key and never evicts";
  if (layer.storage.global_hbm_for_values > 0 && !layer.storage.caching)
    return "its storage is in hybrid mode (global_hbm_for_values without caching): a key's tier is fixed by its "
           "hash, so no eviction by score decides what the fast tier holds";
  return "";
}

std::vector<std::string> parse_layer_names(const ValueReader& list, const Config& config) {
  std::vector<std::string> names;
  for (const auto& item : list.array(1, "a non-empty array of embedding layer names")) {
    const std::string name = item.name();
    const auto layer = std::find_if(config.embeddings.begin(), config.embeddings.end(),
                                    [&](const EmbeddingLayer& e) { return e.name == name; });
    if (layer == config.embeddings.end()) {
      std::vector<std::string> known;
      for (const auto& e : config.embeddings) known.push_back(e.name);
      item.fail("the name of an embedding layer (" + quoted_list(known) + ")");
    }
    if (const std::string why = unmeasurable(*layer); !why.empty())
      item.fail_with("layer \"" + name + "\" cannot be measured: " + why);
    if (std::find(names.begin(), names.end(), name) != names.end()) item.fail("a layer not listed before");
    names.push_back(name);
  }
  // In config order, whatever the list's order: tables and columns follow the layers.
  std::vector<std::string> ordered;
  for (const auto& e : config.embeddings)
    if (std::find(names.begin(), names.end(), e.name) != names.end()) ordered.push_back(e.name);
  return ordered;
}

std::vector<std::string> parse_oracles(const ValueReader& list) {
  std::vector<std::string> chosen;
  for (const auto& item : list.array(1, "a non-empty array of oracle names")) {
    const std::string name = item.one_of(kEvictionOracles);
    if (std::find(chosen.begin(), chosen.end(), name) != chosen.end()) item.fail("an oracle not listed before");
    chosen.push_back(name);
  }
  std::vector<std::string> ordered;
  for (const auto& name : kEvictionOracles)
    if (std::find(chosen.begin(), chosen.end(), name) != chosen.end()) ordered.push_back(name);
  return ordered;
}

}  // namespace

EvictionStudy parse_eviction_study(const ObjectReader& r, const Config& config) {
  r.only_keys({"layers", "oracles", "sample_every", "hot_key_share", "belady_max_accesses"});
  EvictionStudy study;
  if (const auto layers = r.optional("layers")) {
    study.layers = parse_layer_names(*layers, config);
  } else {
    std::string reasons;
    for (const auto& e : config.embeddings) {
      const std::string why = unmeasurable(e);
      if (why.empty()) study.layers.push_back(e.name);
      else reasons += "; layers[" + e.name + "]: " + why;
    }
    if (study.layers.empty())
      throw InputError(r.origin() + ": " + r.path() + ": no embedding layer can be measured" + reasons +
                       ". The eviction study needs a layer with storage.type \"dynamic\"");
  }
  study.oracles = r.has("oracles") ? parse_oracles(r.required("oracles", "")) : kEvictionOracles;
  study.sample_every = r.integer_or("sample_every", study.sample_every, IntRange::at_least(1));
  study.hot_key_share = r.number_or("hot_key_share", study.hot_key_share, NumberRange::between(1e-9, 1.0));
  study.belady_max_accesses =
      r.integer_or("belady_max_accesses", study.belady_max_accesses, IntRange::between(1, std::int64_t{1} << 40));
  return study;
}

}  // namespace embscale::config
