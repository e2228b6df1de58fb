// Where an embscale binary finds what is installed with it. `cmake --install` lays out
//   <prefix>/bin/embscale              the binary
//   <prefix>/lib/libembscale_cuda.so   the CUDA kernels (lib/device loads them from there)
//   <prefix>/share/embscale/           the plot scripts, configs/ (the example configs)
// and the build tree mirrors the share folder beside its binary (build/bench/cli/embscale finds
// build/bench/share/embscale/, links to the sources made at configure time), so one rule serves an
// installed binary and a built one, and no source path is compiled in.
#pragma once

#include <filesystem>

namespace embscale {

// The folder of the running executable; empty when /proc/self/exe cannot be read.
std::filesystem::path executable_directory();
// <the executable's folder>/../share/embscale; empty when the executable's folder is unknown.
std::filesystem::path shared_data_directory();

}  // namespace embscale
