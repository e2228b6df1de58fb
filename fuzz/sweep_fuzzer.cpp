// libFuzzer target for the sweep reader (config/sweep_spec.hpp): any bytes as a sweep file's text,
// over the embedded default config as its base, must parse into a SweepSpec (every point's config
// built) or fail with InputError; never crash, throw anything else, or hang. Grids multiply: the
// reader refuses a sweep past kMaxSweepPoints before it builds a point.
//
// Seeds: the shipped sweeps (bench/sweeps/), copied by scripts/fuzz-check.
#include <cstdint>
#include <string>

#include "config/config.hpp"
#include "config/sweep_spec.hpp"
#include "core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  embscale::config::SweepSource source;
  source.origin = "fuzz_sweep.json";
  source.text.assign(reinterpret_cast<const char*>(data), size);
  source.base_origin = "<embedded default>";
  source.base_text = embscale::config::default_config_text();
  try {
    (void)embscale::config::parse_sweep(source);
  } catch (const embscale::InputError&) {}
  return 0;
}
