#include "core/byte_io.hpp"

#include <sstream>

#include "core/error.hpp"

namespace embscale {

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

std::string quoted_bytes(const std::byte* p, std::size_t n) {
  std::string s = "\"";
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(p[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      s += static_cast<char>(c);
    } else {
      static constexpr char digits[] = "0123456789abcdef";
      s += "\\x";
      s += digits[c >> 4];
      s += digits[c & 15];
    }
  }
  return s + "\"";
}

void throw_field_error(const std::string& file, std::uint64_t offset, const std::string& field,
                       const std::string& expected, const std::string& got) {
  throw InputError(file + ": byte " + std::to_string(offset) + ", " + field + ": expected " + expected + ", got " +
                   got);
}

void throw_truncated(const std::string& file, const std::string& field, std::uint64_t begin, std::uint64_t end,
                     std::uint64_t limit, const std::string& what_ends) {
  throw InputError(file + ": truncated: " + field + " needs bytes [" + std::to_string(begin) + ", " +
                   std::to_string(end) + ") but " + what_ends + " ends at byte " + std::to_string(limit));
}

}  // namespace embscale
