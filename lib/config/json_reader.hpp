// Reading a JSON object field by field with precise errors. Every error is an InputError
//   "<origin>: <path>: expected <what>, got <the value as JSON>"
// where <path> is the dotted path of the value ("solver.batchsize", "layers[emb1].combiner").
// An object reader also knows which keys it accepts, so an unknown key is an error that suggests
// the nearest known key ("did you mean ...").
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace embscale::config {

// Edit distance (Levenshtein) between two keys, for suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate nearest to `key` when it is close enough to be a likely typo, else "".
std::string nearest_key(std::string_view key, const std::vector<std::string>& candidates);

class ObjectReader {
 public:
  // Throws unless `value` is an object.
  ObjectReader(const nlohmann::json& value, std::string path, const std::string& origin);

  const std::string& path() const noexcept { return path_; }
  std::string path_of(std::string_view key) const;
  const std::string& origin() const noexcept { return *origin_; }
  bool has(std::string_view key) const { return value_->contains(key); }
  const nlohmann::json& at(std::string_view key) const;  // required: missing is an error

  std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  std::int64_t integer_or(std::string_view key, std::int64_t fallback, std::int64_t min,
                          std::int64_t max = std::numeric_limits<std::int64_t>::max()) const;
  std::uint64_t unsigned_or(std::string_view key, std::uint64_t fallback) const;
  double number(std::string_view key, double min, double max, bool min_exclusive = false) const;
  double number_or(std::string_view key, double fallback, double min, double max) const;
  std::string string(std::string_view key) const;
  std::string string_or(std::string_view key, std::string fallback) const;
  std::string one_of(std::string_view key, const std::vector<std::string>& allowed) const;
  ObjectReader object(std::string_view key) const;

  // Every key of the object must be in `known`; the first that is not is an error.
  void only_keys(const std::vector<std::string>& known) const;

  [[noreturn]] void fail(std::string_view key, const std::string& expected) const;
  [[noreturn]] void fail_at(const std::string& path, const nlohmann::json& got, const std::string& expected) const;

 private:
  const nlohmann::json* value_;
  std::string path_;
  const std::string* origin_;
};

// "a", "b" or "c" — for messages listing the accepted values.
std::string quoted_list(const std::vector<std::string>& values);

}  // namespace embscale::config
