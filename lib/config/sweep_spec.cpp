#include "config/sweep_spec.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include "config/json_reader.hpp"
#include "config/json_text.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"

namespace embscale::config {
namespace {

constexpr auto kEmbeddedOrigin = "<embedded default>";

std::string read_text_file(const std::filesystem::path& path, const std::string& what) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw InputError(path.string() + ": cannot open " + what + ": " + std::strerror(EISDIR));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot open " + what + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path.string() + ": cannot read " + what + ": " + std::strerror(errno));
  return text.str();
}

std::vector<std::string> split_path(const std::string& field) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t dot; (dot = field.find('.', start)) != std::string::npos; start = dot + 1)
    parts.push_back(field.substr(start, dot - start));
  parts.push_back(field.substr(start));
  return parts;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

[[noreturn]] void fail(const std::string& origin, const std::string& message) {
  throw InputError(origin + ": " + message);
}

// Every field of `config` as a sweep addresses it (dotted, layers by name): the objects and the
// values in them, the candidates of "did you mean" for a field that does not exist.
void collect_fields(const nlohmann::json& node, const std::string& path, std::vector<std::string>& fields) {
  if (node.is_object()) {
    for (const auto& [key, value] : node.items()) {
      const std::string field = path.empty() ? key : path + "." + key;
      fields.push_back(field);
      collect_fields(value, field, fields);
    }
  } else if (node.is_array() && path == "layers") {
    for (const auto& layer : node)
      if (layer.is_object() && layer.contains("name") && layer["name"].is_string())
        collect_fields(layer, "layers." + layer["name"].get<std::string>(), fields);
  }
}

// Whether `name` is one or more whole words of `candidate`'s snake_case name: "zipf" of
// "zipf_alpha", "vec_size" of "embedding_vec_size".
bool names_words_of(const std::string& name, const std::string& candidate) {
  if (name.empty() || name.size() >= candidate.size()) return false;
  for (std::size_t at = candidate.find(name); at != std::string::npos; at = candidate.find(name, at + 1)) {
    const std::size_t end = at + name.size();
    if ((at == 0 || candidate[at - 1] == '_') && (end == candidate.size() || candidate[end] == '_')) return true;
  }
  return false;
}

// The candidate nearest to `field` over the whole path among those whose last name is a typo of
// `name` (by_words false) or holds it as whole words (true); "" when none is.
std::string nearest_field_among(const std::vector<std::string>& fields, const std::string& field,
                                const std::string& name, bool by_words) {
  std::string best;
  std::pair<std::size_t, std::size_t> best_distance{std::numeric_limits<std::size_t>::max(), 0};
  for (const auto& candidate : fields) {
    const std::string candidate_name = split_path(candidate).back();
    if (by_words ? !names_words_of(name, candidate_name) : nearest_name(name, {candidate_name}).empty()) continue;
    const std::pair distance{edit_distance(name, candidate_name), edit_distance(field, candidate)};
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

// The existing field `field` most likely meant, or "": among the fields whose last name is close
// to field's last name (nearest_name's typo rule), the nearest over the whole path; failing that,
// among those whose last name holds it as whole words ("zipf" -> "zipf_alpha"). So a field put in
// the wrong section ("solver.zipf_alpha", "batchsize"), a typo in any of its names
// ("solvr.batchsize", "layers.emb2.…", "….embedding_vec_sise") and a short name ("zipf") find the
// field meant.
std::string nearest_field(const std::string& field, const nlohmann::json& config) {
  std::vector<std::string> fields;
  collect_fields(config, "", fields);
  const std::string name = split_path(field).back();
  for (const bool by_words : {false, true}) {
    const std::string best = nearest_field_among(fields, field, name, by_words);
    if (!best.empty()) return best;
  }
  return "";
}

// The hint after "the config has no <name>": `sibling_hint` when the name is close to one beside it
// ("; did you mean "x"?" from did_you_mean or the parser), else the nearest existing field
// anywhere, else `otherwise` (the parser's list of the keys it knows there, or "").
std::string field_suggestion(const std::string& field, const nlohmann::json& config, const std::string& sibling_hint,
                             const std::string& otherwise = "") {
  if (!sibling_hint.empty()) return sibling_hint;
  const std::string nearest = nearest_field(field, config);
  return nearest.empty() ? otherwise : "; did you mean \"" + nearest + "\"?";
}

// Where a field's last name goes in a config.
struct FieldPlace {
  nlohmann::json* parent;  // the object holding it
  std::string
      parent_field;  // that object as a sweep addresses it ("layers.emb1.sparse_embedding_hparam"; "" at the top)
  std::string config_path;  // the field as parse_config's messages name it ("layers[emb1].sparse_embedding_hparam.x")
};

// Walks `field` in `config`: "layers.<name>" selects the layer of that name. Throws InputError
// naming `origin` when a component before the last does not exist (suggesting the nearest
// existing field); the last may be absent (check_field_exists asks the parser about it).
FieldPlace locate(nlohmann::json& config, const std::string& field, const std::string& origin) {
  const auto parts = split_path(field);
  nlohmann::json* node = &config;
  std::string walked, config_path;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (part.empty()) fail(origin, "field \"" + field + "\": empty component in the path");
    if (node->is_array() && walked == "layers") {
      std::vector<std::string> names;
      std::optional<std::size_t> found;
      for (std::size_t l = 0; l < node->size(); ++l) {
        const auto& layer = (*node)[l];
        if (!layer.is_object() || !layer.contains("name") || !layer["name"].is_string()) continue;
        names.push_back(layer["name"].get<std::string>());
        if (names.back() == part) found = l;
      }
      if (!found)
        fail(origin, "field \"" + field + "\": the config has no layer named \"" + part + "\" (layers: " +
                         join_names(names) + ")" + field_suggestion(field, config, did_you_mean(part, names)));
      config_path = layer_path(*node, *found);
      node = &(*node)[*found];
    } else if (node->is_object()) {
      if (!node->contains(part)) {
        std::vector<std::string> keys;
        for (const auto& [key, value] : node->items()) keys.push_back(key);
        fail(origin, "field \"" + field + "\": the config has no \"" + part + "\"" +
                         (walked.empty() ? "" : " in \"" + walked + "\"") +
                         field_suggestion(field, config, did_you_mean(part, keys)));
      }
      config_path += (config_path.empty() ? "" : ".") + part;
      node = &(*node)[part];
    } else {
      fail(origin, "field \"" + field + "\": \"" + walked + "\" is not an object or the layer list");
    }
    walked += (walked.empty() ? "" : ".") + part;
  }
  if (parts.back().empty()) fail(origin, "field \"" + field + "\": empty component in the path");
  if (!node->is_object())
    fail(origin, "field \"" + field + "\": \"" + walked + "\" " +
                     (walked == "layers" ? "is the layer list: name a layer and a field (layers.<name>.<field>)"
                                         : "is not an object"));
  return {node, walked, config_path + (config_path.empty() ? "" : ".") + parts.back()};
}

nlohmann::json& parent_of(nlohmann::json& config, const std::string& field, const std::string& origin) {
  return *locate(config, field, origin).parent;
}

// Throws InputError "<origin>: field "<field>": ..." unless `field` exists: every component is in
// `config`, or the last is not but the schema knows it (a field left to its default). Which
// names the schema knows, only the parser says: the config is parsed with the field set to
// `value`, and an "unknown key" for exactly this field is the answer; any other error (a bad
// value) is left to the parse of the config that is run, which names the point or setting.
void check_field_exists(const nlohmann::json& config, const std::string& field, const nlohmann::json& value,
                        const std::string& origin) {
  static const std::string kProbe = "<field probe>";
  nlohmann::json probe = config;
  const FieldPlace place = locate(probe, field, origin);
  const std::string name = split_path(field).back();
  if (place.parent->contains(name)) return;
  (*place.parent)[name] = value;
  try {
    parse_config(probe, kProbe);
  } catch (const InputError& e) {
    const std::string message = e.what();
    const std::string unknown = kProbe + ": " + place.config_path + ": unknown key";
    if (message.rfind(unknown, 0) != 0) return;
    // ObjectReader::only_keys goes on with "; did you mean "x"?" or "; known keys: ...".
    const std::string parser_hint = message.substr(unknown.size());
    const bool sibling = parser_hint.rfind("; did you mean", 0) == 0;
    fail(origin, "field \"" + field + "\": the config has no \"" + name + "\"" +
                     (place.parent_field.empty() ? "" : " in \"" + place.parent_field + "\"") +
                     field_suggestion(field, config, sibling ? parser_hint : "", sibling ? "" : parser_hint));
  }
}

AxisKind kind_of(const nlohmann::json& value) {
  if (value.is_number_integer()) return AxisKind::kInteger;
  if (value.is_number()) return AxisKind::kNumber;
  if (value.is_string()) return AxisKind::kText;
  return AxisKind::kJson;
}

// One kind for all values of a field: integers and numbers mix (as numbers); nothing else does.
AxisKind common_kind(const std::vector<nlohmann::json>& values, const std::string& origin, const std::string& field) {
  AxisKind kind = kind_of(values.front());
  for (const auto& v : values) {
    const AxisKind k = kind_of(v);
    const bool numeric = (k == AxisKind::kInteger || k == AxisKind::kNumber) &&
                         (kind == AxisKind::kInteger || kind == AxisKind::kNumber);
    if (numeric) kind = (k == AxisKind::kNumber || kind == AxisKind::kNumber) ? AxisKind::kNumber : AxisKind::kInteger;
    else if (k != kind)
      fail(origin, "field \"" + field + "\": values mix kinds (" + describe_json(values.front()) + " and " +
                       describe_json(v) + "); a swept field takes numbers, or text, or other JSON");
  }
  return kind;
}

struct Axis {
  std::string field;
  std::vector<nlohmann::json> values;  // grid: the values; list: one per listed point
};

}  // namespace

SweepSource read_sweep_source(const std::string& path) {
  SweepSource source;
  source.origin = path;
  source.text = read_text_file(path, "sweep file");
  // Only "base" is looked at here; parse_sweep reports everything else (and a bad base type).
  nlohmann::json json = parse_json_text(source.text, path);
  if (json.is_object() && json.contains("base") && json["base"].is_string()) {
    const std::filesystem::path base = json["base"].get<std::string>();
    const auto resolved = base.is_absolute() ? base : std::filesystem::path(path).parent_path() / base;
    source.base_origin = resolved.string();
    source.base_text = read_text_file(resolved, "base config (\"base\" of " + path + ")");
  }
  return source;
}

Config parse_config_with_settings(const std::string& text, const std::string& origin,
                                  const std::vector<std::string>& settings) {
  nlohmann::json config = parse_json_text(text, origin);
  if (settings.empty()) return parse_config(config, origin);
  std::string described;
  for (const auto& setting : settings) {
    const auto equals = setting.find('=');
    const std::string where = "--set " + setting;
    if (equals == std::string::npos || equals == 0) fail(where, "expected FIELD=VALUE");
    const std::string field = setting.substr(0, equals);
    const std::string value_text = setting.substr(equals + 1);
    if (field == kRanksField) fail(where, "the rank count is the launcher's (mpiexec -n, srun -n)");
    nlohmann::json value = nlohmann::json::parse(value_text, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) value = value_text;
    if (value.is_null()) {  // FIELD=null (run --unset FIELD): the field goes, its default applies
      auto& parent = parent_of(config, field, where);
      if (parent.erase(split_path(field).back()) == 0)
        fail(where,
             "field \"" + field + "\" is not in the config: nothing to remove" + field_suggestion(field, config, ""));
      described += (described.empty() ? "" : " ") + field + "=null";
      continue;
    }
    check_field_exists(config, field, value, where);
    parent_of(config, field, where)[split_path(field).back()] = value;
    described += (described.empty() ? "" : " ") + field + "=" + describe_json(value);
  }
  return parse_config(config, origin + " with " + described);
}

std::string describe_settings(const std::vector<SweepSetting>& settings) {
  std::string out;
  for (const auto& s : settings) out += (out.empty() ? "" : " ") + s.field + "=" + describe_json(s.value);
  return out;
}

SweepSpec parse_sweep(const SweepSource& source) {
  const nlohmann::json json = parse_json_text(source.text, source.origin);
  const ValueReader root(json, "", source.origin);
  const ObjectReader top(root);
  top.only_keys({"sweep_version", "base", "grid", "points", "repetitions"});
  top.integer_or("sweep_version", kSweepVersion, IntRange::between(kSweepVersion, kSweepVersion));

  SweepSpec spec;
  nlohmann::json base_json;
  std::string base_origin;
  std::filesystem::path directory;  // relative paths of the base: its file's, an inline base's the sweep file's
  if (const auto base = top.optional("base")) {
    if (base->json().is_string()) {
      base_json = parse_json_text(source.base_text, source.base_origin);
      base_origin = source.base_origin;
      directory = config_directory(source.base_origin);
    } else if (base->json().is_object()) {
      base_json = base->json();
      base_origin = source.origin + ": base";
      directory = config_directory(source.origin);
    } else {
      base->fail("a config file path (relative to the sweep file) or a config object");
    }
  } else {
    base_json = parse_json_text(default_config_text(), kEmbeddedOrigin);
    base_origin = kEmbeddedOrigin;
  }
  spec.base = parse_config(base_json, base_origin);
  spec.base.directory = directory;
  spec.repetitions = top.integer_or("repetitions", 1, IntRange::between(1, 1000000));

  // The axes: the list's fields (in the first point's order), then the grid's (in file order:
  // JSON objects are unordered, so the grid's key order is read with an order-keeping parser).
  std::vector<Axis> list_axes, grid_axes;
  std::size_t list_size = 1;
  const auto ordered = nlohmann::ordered_json::parse(source.text);  // valid: parsed above
  if (const auto points = top.optional("points")) {
    const auto entries = points->array(1, "a non-empty array of objects {\"<field>\": value, ...}");
    list_size = entries.size();
    entries.front().object();
    for (const auto& [field, value] : ordered["points"][0].items()) list_axes.push_back({field, {}});
    for (const auto& entry : entries) {
      entry.object();  // throws unless it is an object
      std::set<std::string> keys;
      for (const auto& [field, value] : entry.json().items()) keys.insert(field);
      std::set<std::string> expected;
      for (const auto& axis : list_axes) expected.insert(axis.field);
      if (keys != expected)
        entry.fail_with("sets the fields {" + join_names({keys.begin(), keys.end()}) + "}, the first point sets {" +
                        join_names({expected.begin(), expected.end()}) + "}; every listed point sets the same fields");
      for (auto& axis : list_axes) axis.values.push_back(entry.json().at(axis.field));
    }
  }
  if (const auto grid = top.optional("grid")) {
    grid->object();
    for (const auto& [field, values] : ordered["grid"].items()) {
      const ObjectReader g = grid->object();
      const auto entries = g.required(field, "").array(1, "a non-empty array of values");
      Axis axis{field, {}};
      for (const auto& e : entries) axis.values.push_back(e.json());
      grid_axes.push_back(std::move(axis));
    }
  }

  std::vector<Axis> axes = list_axes;
  axes.insert(axes.end(), grid_axes.begin(), grid_axes.end());
  std::set<std::string> seen;
  for (const auto& axis : axes) {
    if (!seen.insert(axis.field).second)
      fail(source.origin, "field \"" + axis.field + "\" is both in \"points\" and in \"grid\"");
    if (axis.field == kRanksField) {
      for (const auto& v : axis.values)
        if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > (1 << 24))
          fail(source.origin, "field \"ranks\": expected integers >= 1, got " + describe_json(v));
    } else {
      check_field_exists(base_json, axis.field, axis.values.front(), source.origin);
    }
    spec.axes.push_back(axis.field);
    spec.axis_kinds.push_back(common_kind(axis.values, source.origin, axis.field));
  }

  // Expand: the listed points outermost, then the grid fields, the last one fastest. Each point
  // is a whole config: a grid past kMaxSweepPoints is refused before any is built (a product of
  // axes grows beyond memory, and beyond size_t, quickly).
  std::size_t grid_size = 1;
  for (const auto& axis : grid_axes) {
    grid_size *= axis.values.size();
    if (grid_size * list_size > kMaxSweepPoints)
      fail(source.origin, "the sweep expands to more than " + std::to_string(kMaxSweepPoints) +
                              " points (the listed points times each grid axis's values): split it into sweeps");
  }
  nlohmann::json digest_input = nlohmann::json::array();
  for (std::size_t l = 0; l < list_size; ++l) {
    for (std::size_t g = 0; g < grid_size; ++g) {
      SweepPoint point;
      point.index = static_cast<std::int64_t>(spec.points.size());
      for (const auto& axis : list_axes) point.settings.push_back({axis.field, axis.values[l]});
      std::size_t rest = g;
      std::vector<SweepSetting> grid_settings(grid_axes.size());
      for (std::size_t a = grid_axes.size(); a-- > 0;) {
        grid_settings[a] = {grid_axes[a].field, grid_axes[a].values[rest % grid_axes[a].values.size()]};
        rest /= grid_axes[a].values.size();
      }
      point.settings.insert(point.settings.end(), grid_settings.begin(), grid_settings.end());

      nlohmann::json config = base_json;
      for (const auto& s : point.settings) {
        if (s.field == kRanksField) point.ranks = s.value.get<int>();
        else parent_of(config, s.field, source.origin)[split_path(s.field).back()] = s.value;
      }
      const std::string where =
          source.origin + ": point " + std::to_string(point.index) + " (" + describe_settings(point.settings) + ")";
      point.config = parse_config(config, where);  // its errors read "<where>: <path>: ..."
      point.config.directory = directory;
      digest_input.push_back({{"config", config}, {"ranks", point.ranks}});
      spec.points.push_back(std::move(point));
    }
  }
  digest_input.push_back({{"repetitions", spec.repetitions}});
  const std::string canonical = digest_input.dump();
  spec.digest = fnv1a64(reinterpret_cast<const unsigned char*>(canonical.data()), canonical.size());
  return spec;
}

}  // namespace embscale::config
