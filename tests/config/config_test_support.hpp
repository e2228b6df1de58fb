// Helpers shared by the config tests: the default config as editable JSON, and the message of
// the InputError a config raises.
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "core/error.hpp"

namespace embscale::config::testing {

// The embedded default as JSON, for tests that change one field of a valid config.
inline nlohmann::json default_json() { return nlohmann::json::parse(default_config_text()); }

// The message of the InputError that parsing `json` throws, "" when it parses. The origin in
// messages is "test.json".
inline std::string error_of(const nlohmann::json& json) {
  try {
    parse_config(json, "test.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The same for text (JSON syntax errors, duplicate keys), origin "test.json".
inline std::string text_error_of(const std::string& text) {
  try {
    parse_config_text(text, "test.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The layer named `name` in a config's "layers" array.
inline nlohmann::json& layer(nlohmann::json& config, const std::string& name) {
  for (auto& l : config["layers"])
    if (l.value("name", "") == name) return l;
  throw std::logic_error("test config has no layer " + name);
}

}  // namespace embscale::config::testing
