// libFuzzer target for the config reader (lib/config): any bytes as a config file's text, embscale's
// own schema or HugeCTR's names, must parse into a Config or fail with InputError; never crash,
// throw anything else, read out of bounds, allocate without bound or hang.
//
// Seeds: the shipped configs (bench/configs/, its large/ and tests/cli/hugectr_forms/, HugeCTR's
// sample files' forms), copied by scripts/fuzz-check.
#include <cstdint>
#include <string>

#include "config/config.hpp"
#include "core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)embscale::config::parse_config_text(text, "fuzz.json");
  } catch (const embscale::InputError&) {
    // Bad input, said as such: what the reader must do.
  }
  return 0;
}
