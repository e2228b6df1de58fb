// `embscale plan [CONFIG] --ranks P`: the sharding planner (lib/plan) on a config, serial:
// prints the plan (per planned layer: scheme, tables, owners; per rank: expected pairs, lookups,
// bytes, memory, time) and writes it as a config `run` accepts unchanged, for review and editing.
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "bench/cli/subcommand_registry.hpp"
#include "collectives/size_sweep.hpp"
#include "config/sweep_spec.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/temp_files.hpp"
#include "plan/plan_report.hpp"
#include "plan/planner.hpp"
#include "run/training_run.hpp"

namespace embscale::cli {
namespace {

struct PlanOptions {
  std::optional<std::string> config_path;  // none: the embedded default
  int ranks = 0;
  std::string output;  // empty: <config stem>.plan<ranks>.json here
  std::vector<std::string> settings;
  bool all_layers = false;
  bool skew_blind = false;
  bool json = false;
  std::string memory_per_rank;  // with K/M/G/T suffixes; empty: the config's, else the default
  std::optional<double> seconds_per_key, seconds_per_row, seconds_per_byte, seconds_per_comm_byte,
      seconds_per_collective;
};

// The config text with the flags that choose what is planned applied to its layers: --all-layers
// makes every embedding layer "auto", --skew-blind every planned layer "auto_skew_blind".
config::Config load_for_planning(const PlanOptions& options) {
  const std::string origin = options.config_path.value_or("<embedded default>");
  const std::string text =
      options.config_path ? config::read_config_text(*options.config_path) : config::default_config_text();
  auto config = config::parse_config_with_settings(text, origin, options.settings);
  if (options.all_layers || options.skew_blind) {
    auto json = config.source;
    for (auto& layer : json["layers"]) {
      const auto name = layer.value("name", std::string());
      const auto it = std::find_if(config.embeddings.begin(), config.embeddings.end(),
                                   [&](const config::EmbeddingLayer& e) { return e.name == name; });
      if (it == config.embeddings.end()) continue;
      if (!options.all_layers && !config::is_auto_sharding(it->sharding)) continue;
      layer["type"] = "ShardedEmbedding";
      layer["sharding"] = options.skew_blind ? config::kAutoSkewBlindSharding : config::kAutoSharding;
      layer.erase("table_ranks");
    }
    config = config::parse_config(json, origin);
  }
  if (options.config_path) config.directory = config::config_directory(*options.config_path);
  if (!plan::has_auto_layers(config))
    throw InputError(origin +
                     ": no layer to plan: give a layer \"sharding\": \"auto\" (or \"auto_skew_blind\"), "
                     "or pass --all-layers");
  auto& planner = config.planner ? *config.planner : config.planner.emplace();
  if (!options.memory_per_rank.empty())
    planner.memory_per_rank =
        static_cast<std::int64_t>(collectives::parse_size(options.memory_per_rank, "--memory-per-rank"));
  if (options.seconds_per_key) planner.seconds_per_key = options.seconds_per_key;
  if (options.seconds_per_row) planner.seconds_per_row = options.seconds_per_row;
  if (options.seconds_per_byte) planner.seconds_per_byte = options.seconds_per_byte;
  if (options.seconds_per_comm_byte) planner.seconds_per_comm_byte = options.seconds_per_comm_byte;
  if (options.seconds_per_collective) planner.seconds_per_collective = options.seconds_per_collective;
  return config;
}

std::filesystem::path default_output(const PlanOptions& options) {
  const std::string stem =
      options.config_path ? std::filesystem::path(*options.config_path).stem().string() : "default";
  return stem + ".plan" + std::to_string(options.ranks) + ".json";
}

int plan_command(const PlanOptions& options) {
  auto config = load_for_planning(options);
  config::resolve_batch_for_ranks(config, options.ranks);
  const auto plan = plan::plan_sharding(config, options.ranks);
  const auto planned = plan::planned_config(config, plan);
  run::check_config_for_ranks(planned, options.ranks);  // what `run` will check
  const std::filesystem::path output =
      options.output.empty() ? default_output(options) : std::filesystem::path(options.output);
  const auto directory = output.parent_path().empty() ? std::filesystem::path(".") : output.parent_path();
  if (!std::filesystem::is_directory(directory))
    throw InputError(output.string() + ": cannot write the plan: " + directory.string() + " is not a directory");
  if (const std::string why = why_not_replaceable(output); !why.empty())
    throw InputError(output.string() + ": cannot write the plan: " + why);
  AtomicFile file(output);
  const std::string text = plan.config.dump(2) + "\n";
  file.write(text.data(), text.size());
  file.commit();
  // --json: stdout is the JSON document alone (json.load reads it); where the plan went is said
  // on stderr.
  std::ostream& said = options.json ? std::cerr : std::cout;
  if (options.json) {
    std::cout << plan::plan_json(plan).dump(2) << '\n';
  } else {
    plan::print_plan(std::cout, plan);
    std::cout << '\n';
  }
  said << "plan written to " << output.string() << " (run it with: mpiexec -n " << options.ranks << " embscale run "
       << output.string() << ")\n";
  return 0;
}

}  // namespace

// `embscale plan` (subcommand_registry.hpp).
RunFunction define_plan(CLI::App& command, const Invocation&) {
  auto options = std::make_shared<PlanOptions>();
  auto config = std::make_shared<std::string>();
  command.add_option("config", *config, "config JSON file (default: the embedded default)");
  command.add_option("-r,--ranks", options->ranks, "ranks to plan for")->required()->check(CLI::Range(1, 1 << 20));
  command.add_option("-o,--output", options->output,
                     "where to write the planned config (default: <config stem>.plan<ranks>.json)");
  command.add_option("--set", options->settings, "FIELD=VALUE: override a config field, as in `run`; repeatable");
  command.add_flag("--all-layers", options->all_layers,
                   "plan every embedding layer, as if each said \"sharding\": \"auto\"");
  command.add_flag("--skew-blind", options->skew_blind,
                   "plan from table sizes and pooling factors only (TorchRec's planner), ignoring the key skew");
  command.add_flag("--json", options->json, "print the plan and its predictions as JSON instead of a table");
  command.add_option("--memory-per-rank", options->memory_per_rank,
                     "bytes one rank may hold (K/M/G/T suffixes; default: planner.memory_per_rank, else this host's "
                     "memory over the ranks, less 15 %)");
  command.add_option("--seconds-per-key", options->seconds_per_key, "cost of a key routed, de-duplicated or pooled");
  command.add_option("--seconds-per-row", options->seconds_per_row, "cost of a distinct row looked up or updated");
  command.add_option("--seconds-per-byte", options->seconds_per_byte, "cost of a byte read or written in memory");
  command.add_option("--seconds-per-comm-byte", options->seconds_per_comm_byte, "cost of a byte sent or received");
  command.add_option("--seconds-per-collective", options->seconds_per_collective, "fixed cost of a collective call");
  return [options, config] {
    if (!config->empty()) options->config_path = *config;
    return plan_command(*options);
  };
}

}  // namespace embscale::cli
