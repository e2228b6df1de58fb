#include "config/json_reader.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace embscale::config {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string nearest_key(std::string_view key, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(key, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  // A typo, not another word: at most a third of the key's letters (and at least 2) differ.
  const std::size_t allowed = std::max<std::size_t>(2, key.size() / 3);
  return best_distance <= allowed ? best : std::string();
}

std::string quoted_list(const std::vector<std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += i + 1 == values.size() ? " or " : ", ";
    out += "\"" + values[i] + "\"";
  }
  return out;
}

ObjectReader::ObjectReader(const nlohmann::json& value, std::string path, const std::string& origin)
    : value_(&value), path_(std::move(path)), origin_(&origin) {
  if (!value.is_object()) fail_at(path_, value, "an object");
}

std::string ObjectReader::path_of(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void ObjectReader::fail_at(const std::string& path, const nlohmann::json& got, const std::string& expected) const {
  throw InputError(*origin_ + ": " + (path.empty() ? "(top level)" : path) + ": expected " + expected + ", got " +
                   got.dump());
}

void ObjectReader::fail(std::string_view key, const std::string& expected) const {
  fail_at(path_of(key), at(key), expected);
}

const nlohmann::json& ObjectReader::at(std::string_view key) const {
  const auto it = value_->find(key);
  if (it == value_->end()) throw InputError(*origin_ + ": " + path_of(key) + ": required key is missing");
  return *it;
}

std::int64_t ObjectReader::integer(std::string_view key, std::int64_t min, std::int64_t max) const {
  const auto& v = at(key);
  const std::string expected = "an integer " + (max == std::numeric_limits<std::int64_t>::max()
                                                    ? ">= " + std::to_string(min)
                                                    : "in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  if (!v.is_number_integer()) fail(key, expected);
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    fail(key, expected);
  const auto n = v.get<std::int64_t>();
  if (n < min || n > max) fail(key, expected);
  return n;
}

std::int64_t ObjectReader::integer_or(std::string_view key, std::int64_t fallback, std::int64_t min,
                                      std::int64_t max) const {
  return has(key) ? integer(key, min, max) : fallback;
}

std::uint64_t ObjectReader::unsigned_or(std::string_view key, std::uint64_t fallback) const {
  if (!has(key)) return fallback;
  const auto& v = at(key);
  if (!v.is_number_unsigned()) fail(key, "an integer in [0, 2^64)");
  return v.get<std::uint64_t>();
}

double ObjectReader::number(std::string_view key, double min, double max, bool min_exclusive) const {
  const auto& v = at(key);
  const std::string expected = std::string("a number ") + (min_exclusive ? "> " : ">= ") + nlohmann::json(min).dump() +
                               (std::isinf(max) ? "" : " and <= " + nlohmann::json(max).dump());
  if (!v.is_number()) fail(key, expected);
  const double x = v.get<double>();
  if (!std::isfinite(x) || x < min || (min_exclusive && x == min) || x > max) fail(key, expected);
  return x;
}

double ObjectReader::number_or(std::string_view key, double fallback, double min, double max) const {
  return has(key) ? number(key, min, max) : fallback;
}

std::string ObjectReader::string(std::string_view key) const {
  const auto& v = at(key);
  if (!v.is_string()) fail(key, "a string");
  return v.get<std::string>();
}

std::string ObjectReader::string_or(std::string_view key, std::string fallback) const {
  return has(key) ? string(key) : fallback;
}

std::string ObjectReader::one_of(std::string_view key, const std::vector<std::string>& allowed) const {
  const auto& v = at(key);
  if (!v.is_string() || std::find(allowed.begin(), allowed.end(), v.get<std::string>()) == allowed.end())
    fail(key, quoted_list(allowed));
  return v.get<std::string>();
}

ObjectReader ObjectReader::object(std::string_view key) const { return ObjectReader(at(key), path_of(key), *origin_); }

void ObjectReader::only_keys(const std::vector<std::string>& known) const {
  for (const auto& [key, value] : value_->items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string suggestion = nearest_key(key, known);
    throw InputError(*origin_ + ": " + path_of(key) + ": unknown key" +
                     (suggestion.empty() ? "; known keys: " + quoted_list(known) : "; did you mean \"" + suggestion + "\"?"));
  }
}

}  // namespace embscale::config
