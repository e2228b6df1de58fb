#include "config/json_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/error.hpp"

namespace embscale::config {
namespace {

// Longest value text quoted in a message; longer values are cut and end in "...".
constexpr std::size_t kMaxDescribedChars = 80;

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

// 0, 1.05, 1e+300: integral values print without a fraction so ranges read naturally.

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];  // row[i-1][j-1]
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitute = diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string nearest_name(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(name, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  // A typo, not another word: at most a third of the letters (and at least 2) differ.
  const std::size_t allowed = std::max<std::size_t>(2, name.size() / 3);
  return best_distance <= allowed ? best : std::string();
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string suggestion = nearest_name(name, candidates);
  return suggestion.empty() ? "" : "; did you mean \"" + suggestion + "\"?";
}

std::string quoted_list(const std::vector<std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += i + 1 == values.size() ? " or " : ", ";
    out += "\"" + values[i] + "\"";
  }
  return out;
}

std::string describe_json(const nlohmann::json& value) {
  // `replace`: a programmatically built value may hold invalid UTF-8; a message must not throw.
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() <= kMaxDescribedChars) return text;
  std::size_t cut = kMaxDescribedChars - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return text.substr(0, cut) + "...";
}

std::string layer_path(const nlohmann::json& layers, std::size_t index) {
  const auto name_of = [](const nlohmann::json& layer) {
    const bool named = layer.is_object() && layer.contains("name") && layer["name"].is_string();
    return named ? layer["name"].get<std::string>() : std::string();
  };
  const std::string name = layers.is_array() && index < layers.size() ? name_of(layers[index]) : "";
  const bool unique = !name.empty() && std::count_if(layers.begin(), layers.end(),
                                                     [&](const auto& layer) { return name_of(layer) == name; }) == 1;
  return "layers[" + (unique ? name : std::to_string(index)) + "]";
}

std::string IntRange::describe() const {
  constexpr auto lowest = std::numeric_limits<std::int64_t>::min();
  constexpr auto highest = std::numeric_limits<std::int64_t>::max();
  if (min == lowest && max == highest) return "an integer";
  if (max == highest) return "an integer >= " + std::to_string(min);
  if (min == lowest) return "an integer <= " + std::to_string(max);
  return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

ValueReader::ValueReader(const nlohmann::json& value, std::string path, const std::string& origin)
    : value_(&value), path_(std::move(path)), origin_(&origin) {}

void ValueReader::fail_with(const std::string& message) const {
  throw InputError(*origin_ + ": " + (path_.empty() ? "(top level)" : path_) + ": " + message);
}

void ValueReader::fail(const std::string& expected, const std::string& suffix) const {
  fail_with("expected " + expected + ", got " + describe_json(*value_) + suffix);
}

std::int64_t ValueReader::integer(IntRange range) const {
  const auto& v = *value_;
  // An unsigned value above INT64_MAX is out of every range we accept (and would wrap below).
  constexpr auto int64_max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > int64_max)) fail(range.describe());
  const auto n = v.get<std::int64_t>();
  if (n < range.min || n > range.max) fail(range.describe());
  return n;
}

std::uint64_t ValueReader::unsigned_integer() const {
  const auto& v = *value_;
  // Parsed non-negative integers are unsigned; built ones (json(5)) may be signed.
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (!v.is_number_integer() || v.get<std::int64_t>() < 0) fail("an integer in [0, 2^64)");
  return static_cast<std::uint64_t>(v.get<std::int64_t>());
}

double ValueReader::number(NumberRange range) const {
  if (!value_->is_number()) fail(range.describe());
  const double x = value_->get<double>();
  if (!range.contains(x)) fail(range.describe());
  return x;
}

bool ValueReader::boolean() const {
  if (!value_->is_boolean()) fail("true or false");
  return value_->get<bool>();
}

std::string ValueReader::string() const {
  if (!value_->is_string()) fail("a string");
  return value_->get<std::string>();
}

std::string ValueReader::name() const {
  if (!value_->is_string() || value_->get_ref<const std::string&>().empty()) fail("a non-empty string");
  return value_->get<std::string>();
}

std::string ValueReader::one_of(const std::vector<std::string>& allowed) const {
  if (!value_->is_string()) fail(quoted_list(allowed));
  const auto text = value_->get<std::string>();
  if (std::find(allowed.begin(), allowed.end(), text) == allowed.end())
    fail(quoted_list(allowed), did_you_mean(text, allowed));
  return text;
}

ObjectReader ValueReader::object() const { return ObjectReader(*this); }

std::vector<ValueReader> ValueReader::array(std::size_t min_size, const std::string& expected) const {
  if (!value_->is_array() || value_->size() < min_size) fail(expected);
  std::vector<ValueReader> elements;
  elements.reserve(value_->size());
  for (std::size_t i = 0; i < value_->size(); ++i)
    elements.emplace_back((*value_)[i], path_ + "[" + std::to_string(i) + "]", *origin_);
  return elements;
}

ObjectReader::ObjectReader(const ValueReader& value) : self_(value) {
  if (!value.json().is_object()) value.fail("an object");
}

std::string ObjectReader::path_of(std::string_view key) const {
  return path().empty() ? std::string(key) : path() + "." + std::string(key);
}

ValueReader ObjectReader::required(std::string_view key, const std::string& expected) const {
  const auto it = self_.json().find(key);
  if (it == self_.json().end())
    throw InputError(origin() + ": " + path_of(key) + ": required key is missing; expected " + expected);
  return ValueReader(*it, path_of(key), origin());
}

std::optional<ValueReader> ObjectReader::optional(std::string_view key) const {
  const auto it = self_.json().find(key);
  if (it == self_.json().end()) return std::nullopt;
  return ValueReader(*it, path_of(key), origin());
}

std::int64_t ObjectReader::integer(std::string_view key, IntRange range) const {
  return required(key, range.describe()).integer(range);
}

std::int64_t ObjectReader::integer_or(std::string_view key, std::int64_t fallback, IntRange range) const {
  const auto v = optional(key);
  return v ? v->integer(range) : fallback;
}

std::uint64_t ObjectReader::unsigned_or(std::string_view key, std::uint64_t fallback) const {
  const auto v = optional(key);
  return v ? v->unsigned_integer() : fallback;
}

double ObjectReader::number(std::string_view key, NumberRange range) const {
  return required(key, range.describe()).number(range);
}

double ObjectReader::number_or(std::string_view key, double fallback, NumberRange range) const {
  const auto v = optional(key);
  return v ? v->number(range) : fallback;
}

std::string ObjectReader::string(std::string_view key) const { return required(key, "a string").string(); }

std::string ObjectReader::name(std::string_view key) const { return required(key, "a non-empty string").name(); }

std::string ObjectReader::one_of(std::string_view key, const std::vector<std::string>& allowed) const {
  return required(key, quoted_list(allowed)).one_of(allowed);
}

std::string ObjectReader::one_of_or(std::string_view key, const std::string& fallback,
                                    const std::vector<std::string>& allowed) const {
  const auto v = optional(key);
  return v ? v->one_of(allowed) : fallback;
}

ObjectReader ObjectReader::object(std::string_view key) const { return required(key, "an object").object(); }

void ObjectReader::only_keys(const std::vector<std::string>& known) const {
  for (const auto& [key, value] : self_.json().items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string suggestion = did_you_mean(key, known);
    throw InputError(origin() + ": " + path_of(key) + ": unknown key" +
                     (suggestion.empty() ? "; known keys: " + quoted_list(known) : suggestion));
  }
}

}  // namespace embscale::config
