// JSON text to a JSON value, with errors a person can act on (internal to lib/config):
//   * invalid JSON: "<origin>:<line>:<column>: invalid JSON: <reason>", line and column 1-based,
//     the column counted in characters (UTF-8), pointing where the parser stopped;
//   * a key repeated within one object: "<origin>: <path>: duplicate key ..." — JSON parsers keep
//     the last value silently, so a repeated "combiner" would otherwise lose the first one unseen.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace embscale::config {

struct TextPosition {
  std::size_t line = 1;
  std::size_t column = 1;
};

// The position of the 1-based byte `byte` of `text` (nlohmann's parse_error::byte); a byte past
// the end is the position just after the last character.
TextPosition position_of_byte(const std::string& text, std::size_t byte);

nlohmann::json parse_json_text(const std::string& text, const std::string& origin);

}  // namespace embscale::config
