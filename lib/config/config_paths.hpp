// The fields of a config that name files, each relative to the config file's directory when
// relative: the Data layer's "source" (a trace), planner.hardware, solver.incremental_dump's
// directory, solver.checkpoint's directory and resume_from, and the parameter server's
// save_directory and load_directory. A config written somewhere else (the plan `embscale plan`
// writes) must say them relative to its own directory, or they name other files.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

namespace embscale::config {

// `config_json` (a config as JSON) with each relative path field rewritten from `from` (the
// directory it was relative to) to `to` (the directory of the file it will be written to). Both
// directories may be relative (to the working directory) or empty (the working directory). Absolute
// paths and fields that are absent or not strings stay as they are.
nlohmann::json rebase_relative_paths(nlohmann::json config_json, const std::filesystem::path& from,
                                     const std::filesystem::path& to);

}  // namespace embscale::config
