#include "config/json_text.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <variant>
#include <vector>

#include "config/json_reader.hpp"
#include "core/error.hpp"

namespace embscale::config {
namespace {

using Segment = std::variant<std::string, std::size_t>;  // an object key or an array index

// Tracks where the parser is (the path of the value being read) and remembers the first key
// that repeats within one object.
class DuplicateKeyFinder {
 public:
  void on_event(nlohmann::json::parse_event_t event, const nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start: stack_.push_back(Frame{}); break;
      case Event::array_start:
        stack_.push_back(Frame{});
        stack_.back().is_array = true;
        break;
      case Event::key: {
        auto& frame = stack_.back();
        frame.key = parsed.get<std::string>();
        if (!frame.keys.insert(frame.key).second && !duplicate_) duplicate_ = current_path();
        break;
      }
      case Event::object_end:
      case Event::array_end:
        stack_.pop_back();
        value_done();
        break;
      case Event::value: value_done(); break;
    }
  }
  const std::optional<std::vector<Segment>>& duplicate() const { return duplicate_; }

 private:
  struct Frame {
    bool is_array = false;
    std::size_t index = 0;       // arrays: the element being read
    std::string key;             // objects: the key whose value is being read
    std::set<std::string> keys;  // objects: keys seen so far
  };

  void value_done() {
    if (!stack_.empty() && stack_.back().is_array) ++stack_.back().index;
  }
  std::vector<Segment> current_path() const {
    std::vector<Segment> path;
    for (const auto& frame : stack_) path.push_back(frame.is_array ? Segment(frame.index) : Segment(frame.key));
    return path;
  }

  std::vector<Frame> stack_;
  std::optional<std::vector<Segment>> duplicate_;
};

// "layers[emb1].sparse_embedding_hparam.combiner": layers addressed as in every other message.
std::string path_string(const std::vector<Segment>& segments, const nlohmann::json& root) {
  std::string out;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    if (const auto* key = std::get_if<std::string>(&segments[i])) {
      out += (out.empty() ? "" : ".") + *key;
    } else if (i == 1 && out == "layers" && root.is_object() && root.contains("layers")) {
      out = layer_path(root["layers"], std::get<std::size_t>(segments[i]));
    } else {
      out += "[" + std::to_string(std::get<std::size_t>(segments[i])) + "]";
    }
  }
  return out;
}

// nlohmann's what() is "[json.exception.parse_error.101] parse error at line L, column C: <reason>";
// the reason is what the user needs, the position we report ourselves.
std::string parse_error_reason(const std::string& what) {
  const auto column = what.find("column ");
  const auto colon = column == std::string::npos ? std::string::npos : what.find(": ", column);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

// "[json.exception.out_of_range.406] number overflow parsing '1e999'" without the "[...] " id.
std::string error_reason(const std::string& what) {
  const auto close = what.find("] ");
  return close == std::string::npos ? what : what.substr(close + 2);
}

// A number too large for a double (1e999) is an out_of_range error without a byte position; the
// message quotes the literal, so ":<line>:<column>" of its first free-standing occurrence (not
// part of a longer number) stands in. "" when it cannot be found.
std::string where_is_number_overflow(const std::string& text, const std::string& what) {
  const auto open = what.find('\'');
  const auto close = what.rfind('\'');
  if (open == std::string::npos || close <= open + 1) return "";
  const std::string literal = what.substr(open + 1, close - open - 1);
  const auto is_number_char = [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+';
  };
  for (auto at = text.find(literal); at != std::string::npos; at = text.find(literal, at + 1)) {
    const std::size_t end = at + literal.size();
    if ((at > 0 && is_number_char(text[at - 1])) || (end < text.size() && is_number_char(text[end]))) continue;
    const auto position = position_of_byte(text, end);  // the literal's last character
    return ":" + std::to_string(position.line) + ":" + std::to_string(position.column);
  }
  return "";
}

}  // namespace

TextPosition position_of_byte(const std::string& text, std::size_t byte) {
  TextPosition at;
  const std::size_t end = std::min(byte == 0 ? 0 : byte - 1, text.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++at.line;
      at.column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {  // not a UTF-8 continuation byte
      ++at.column;
    }
  }
  return at;
}

nlohmann::json parse_json_text(const std::string& text, const std::string& origin) {
  DuplicateKeyFinder finder;
  nlohmann::json json;
  try {
    const auto track = [&finder](int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
      finder.on_event(event, parsed);
      return true;  // keep every value
    };
    json = nlohmann::json::parse(text, track);
  } catch (const nlohmann::json::parse_error& e) {
    const auto at = position_of_byte(text, e.byte);
    throw InputError(origin + ":" + std::to_string(at.line) + ":" + std::to_string(at.column) +
                     ": invalid JSON: " + parse_error_reason(e.what()));
  } catch (const nlohmann::json::out_of_range& e) {
    throw InputError(origin + where_is_number_overflow(text, e.what()) + ": invalid JSON: " + error_reason(e.what()));
  }
  if (const auto& duplicate = finder.duplicate())
    throw InputError(origin + ": " + path_string(*duplicate, json) +
                     ": duplicate key; a key may appear once per object (a JSON parser keeps only the last)");
  return json;
}

}  // namespace embscale::config
