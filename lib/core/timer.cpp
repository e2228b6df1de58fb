#include "core/timer.hpp"

#include <ctime>

namespace embscale {

std::string utc_timestamp(const char* format) {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[64];
  const std::size_t length = std::strftime(text, sizeof text, format, &utc);
  return std::string(text, length);
}

}  // namespace embscale
