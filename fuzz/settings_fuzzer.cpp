// libFuzzer target for `--set FIELD=VALUE` (config::parse_config_with_settings): each line of the
// input is one setting, applied to the embedded default config; the result must be a Config or an
// InputError naming the setting; never a crash, another exception or a hang.
//
// Seeds: settings of the kinds the README and the tests use, written by scripts/fuzz-check.
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "config/sweep_spec.hpp"
#include "core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> settings;
  for (std::size_t start = 0; start <= text.size();) {
    const auto end = std::min(text.find('\n', start), text.size());
    settings.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  try {
    (void)embscale::config::parse_config_with_settings(embscale::config::default_config_text(), "<embedded default>",
                                                       settings);
  } catch (const embscale::InputError&) {}
  return 0;
}
