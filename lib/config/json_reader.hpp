// Reading a parsed JSON document field by field with precise errors. Every error is an InputError
//   "<origin>: <path>: expected <what>, got <the value as JSON>"
// where <path> is the dotted path of the value ("solver.batchsize", "layers[emb1].top").
// A missing required key reads "<origin>: <path>: required key is missing; expected <what>".
// An ObjectReader also knows which keys it accepts (only_keys), so an unknown key is an error that
// suggests the nearest known key ("did you mean ...").
//
// Internal to lib/config; the public surface is config.hpp.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/number_range.hpp"

namespace embscale::config {

class ObjectReader;

// Edit distance (Levenshtein, ASCII case ignored) between two names, for suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate nearest to `name` when it is close enough to be a likely typo, else "".
std::string nearest_name(std::string_view name, const std::vector<std::string>& candidates);
// "; did you mean "x"?" when a candidate is close, else "".
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);
// "a", "b" or "c" — for messages listing the accepted values.
std::string quoted_list(const std::vector<std::string>& values);
// The value as compact JSON for a message, cut to about 80 characters (a whole array would drown
// the message).
std::string describe_json(const nlohmann::json& value);

// The path of layer `index` of the "layers" array: "layers[<name>]" when its name is a non-empty
// string no other layer has, else "layers[<index>]" (an unnamed layer, or a name that is ambiguous).
std::string layer_path(const nlohmann::json& layers, std::size_t index);

// Accepted integers; describe() is the message's "expected" part.
struct IntRange {
  std::int64_t min = std::numeric_limits<std::int64_t>::min();
  std::int64_t max = std::numeric_limits<std::int64_t>::max();
  static IntRange at_least(std::int64_t min) { return {min, std::numeric_limits<std::int64_t>::max()}; }
  static IntRange between(std::int64_t min, std::int64_t max) { return {min, max}; }
  std::string describe() const;  // "an integer >= 1", "an integer in [1, 65536]"
};

// One JSON value and where it is: the unit every check and every message works on.
class ValueReader {
 public:
  ValueReader(const nlohmann::json& value, std::string path, const std::string& origin);

  const nlohmann::json& json() const noexcept { return *value_; }
  const std::string& path() const noexcept { return path_; }
  const std::string& origin() const noexcept { return *origin_; }
  // "<origin>: <path>: <message>" as an InputError.
  [[noreturn]] void fail_with(const std::string& message) const;
  // "<origin>: <path>: expected <expected>, got <value><suffix>".
  [[noreturn]] void fail(const std::string& expected, const std::string& suffix = "") const;

  std::int64_t integer(IntRange range) const;
  std::uint64_t unsigned_integer() const;  // any integer in [0, 2^64)
  double number(NumberRange range) const;
  bool boolean() const;
  std::string string() const;
  std::string name() const;  // a non-empty string
  std::string one_of(const std::vector<std::string>& allowed) const;
  ObjectReader object() const;
  // The elements of an array of at least `min_size` elements; `expected` describes the array.
  std::vector<ValueReader> array(std::size_t min_size, const std::string& expected) const;

 private:
  const nlohmann::json* value_;
  std::string path_;
  const std::string* origin_;  // outlives every reader: owned by the caller of parse_config
};

class ObjectReader {
 public:
  // Throws unless the value is an object.
  explicit ObjectReader(const ValueReader& value);

  const std::string& path() const noexcept { return self_.path(); }
  const std::string& origin() const noexcept { return self_.origin(); }
  std::string path_of(std::string_view key) const;
  bool has(std::string_view key) const { return self_.json().contains(key); }

  // The value at `key`; missing is an error that says what was expected there.
  ValueReader required(std::string_view key, const std::string& expected) const;
  std::optional<ValueReader> optional(std::string_view key) const;

  std::int64_t integer(std::string_view key, IntRange range) const;
  std::int64_t integer_or(std::string_view key, std::int64_t fallback, IntRange range) const;
  std::uint64_t unsigned_or(std::string_view key, std::uint64_t fallback) const;
  double number(std::string_view key, NumberRange range) const;
  double number_or(std::string_view key, double fallback, NumberRange range) const;
  std::string string(std::string_view key) const;
  std::string name(std::string_view key) const;
  std::string one_of(std::string_view key, const std::vector<std::string>& allowed) const;
  std::string one_of_or(std::string_view key, const std::string& fallback,
                        const std::vector<std::string>& allowed) const;
  ObjectReader object(std::string_view key) const;

  // Every key of the object must be in `known`; the first that is not is an error naming the
  // nearest known key, or listing them all when none is close.
  void only_keys(const std::vector<std::string>& known) const;

 private:
  ValueReader self_;
};

}  // namespace embscale::config
