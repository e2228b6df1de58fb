#include "collectives/size_sweep.hpp"

#include <cctype>
#include <limits>

#include "core/error.hpp"

namespace embscale::collectives {

std::uint64_t parse_size(const std::string& text, std::string_view flag) {
  const std::string where = std::string(flag) + ": \"" + text + "\"";
  if (!text.empty() && text.front() == '-') throw InputError(where + " is negative; a size is a byte count >= 0");
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::string suffix = text.substr(digits);
  int shift = -1;
  if (suffix.empty()) shift = 0;
  else if (suffix.size() == 1) {
    switch (std::toupper(static_cast<unsigned char>(suffix[0]))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      default: break;
    }
  }
  if (digits == 0 || shift < 0)
    throw InputError(where + " is not a size; expected a byte count with an optional K, M, G or T suffix (1K = 1024)");
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    value = value * 10 + static_cast<std::uint64_t>(text[i] - '0');
    if (value > kMaxSweepBytes) break;
  }
  if (value > (kMaxSweepBytes >> shift)) throw InputError(where + " is beyond the largest size, 2^40 bytes (1T)");
  return value << shift;
}

std::vector<std::uint64_t> sweep_sizes(const SizeSweep& s) {
  if (s.min_bytes > s.max_bytes)
    throw InputError("-b: the smallest size (" + format_size(s.min_bytes) + ") is above -e's largest (" +
                     format_size(s.max_bytes) + ")");
  if (s.factor == 1) throw InputError("-f: a factor must be at least 2 (got 1)");
  if (s.factor == 0 && s.step_bytes == 0 && s.min_bytes < s.max_bytes)
    throw InputError("-i: the step must be at least 1 byte (got 0)");
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = s.min_bytes; size <= s.max_bytes;) {
    sizes.push_back(size);
    const std::uint64_t next = s.factor > 1 ? (size == 0 ? 1 : size * s.factor) : size + s.step_bytes;
    if (next <= size) break;  // a step of 0 bytes with min == max
    size = next;
  }
  return sizes;
}

std::string format_size(std::uint64_t bytes) {
  static constexpr const char* kSuffix[] = {"", "K", "M", "G", "T"};
  int unit = 0;
  while (unit < 4 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + kSuffix[unit];
}

}  // namespace embscale::collectives
