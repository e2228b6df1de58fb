// What the MPI subcommands that run a config share before they measure: the config, read on rank 0
// and parsed identically everywhere, and the report path every rank agrees on.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "core/batch_source.hpp"

namespace embscale::cli {

struct AgreedConfig {
  config::Config config;
  std::unique_ptr<BatchSource> source;
};

// Collective. Rank 0 reads `path` (none: the embedded default) and broadcasts its text, so every
// rank parses the same bytes even if a node sees another file; then every rank applies the
// --set `settings`, `adjust` (a subcommand's own overrides), and the checks of a run on this many
// ranks, and opens the batch source. Bad input throws AgreedFailure on every rank (exit 2, printed
// once), before any report exists.
AgreedConfig load_config_agreed(comm::Communicator& world, const std::optional<std::string>& path,
                                const std::vector<std::string>& settings, bool embedding_only,
                                const std::function<void(config::Config&)>& adjust = nullptr);

// Collective: `given`, or results/<folder>/<UTC timestamp>[-job<SLURM_JOB_ID>].h5 named on rank 0
// (never an existing file) with its directory created; the same path on every rank.
std::filesystem::path agreed_output_path(comm::Communicator& world, const std::optional<std::string>& given,
                                         const std::string& folder);

}  // namespace embscale::cli
