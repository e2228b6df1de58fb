// `embscale plan [CONFIG] --ranks P`: the sharding planner (lib/plan) on a config, serial:
// prints the plan (per planned layer: scheme, tables, owners; per rank: expected pairs, lookups,
// bytes, memory, time) and writes it as a config `run` accepts unchanged, for review and editing.
// Without --ranks it plans capacity (lib/plan/capacity_search.hpp): the fewest ranks that meet
// the planner section's targets, with every count it tried and why it rejected it.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "bench/cli/subcommand_registry.hpp"
#include "collectives/size_sweep.hpp"
#include "config/config_paths.hpp"
#include "config/sweep_spec.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/temp_files.hpp"
#include "plan/capacity_search.hpp"
#include "plan/plan_report.hpp"
#include "plan/planner.hpp"
#include "run/training_run.hpp"

namespace embscale::cli {
namespace {

struct PlanOptions {
  std::optional<std::string> config_path;  // none: the embedded default
  int ranks = 0;                           // 0: the fewest that meet the targets (capacity planning)
  std::string output;                      // empty: <config stem>.plan<ranks>.json here
  std::vector<std::string> settings;
  bool all_layers = false;
  bool skew_blind = false;
  bool json = false;
  std::string memory_per_rank;  // with K/M/G/T suffixes; empty: the config's, else the default
  std::optional<double> seconds_per_key, seconds_per_row, seconds_per_byte, seconds_per_comm_byte,
      seconds_per_collective;
  std::optional<double> target_step_seconds, memory_headroom;
  std::optional<std::int64_t> max_ranks;
  std::string hardware;           // a hardware description file (planner.hardware)
  double progress_seconds = 2.0;  // a line on stderr this often once the search runs this long
};

// The search's progress on stderr, kept alive by a thread of its own: nothing in the first `every`
// seconds (a quick plan prints nothing), then every `every` seconds what the search last said it
// was doing, so a long step (measuring the loads of 10^5 ranks) still shows (0: every step, as said).
class ProgressLines {
 public:
  explicit ProgressLines(double every) : every_(every), start_(Clock::now()) {
    if (every_ > 0) ticker_ = std::jthread([this](std::stop_token stop) { tick(stop); });
  }
  ProgressLines(const ProgressLines&) = delete;
  ProgressLines& operator=(const ProgressLines&) = delete;
  plan::PlanProgress callback() {
    return [this](const std::string& doing) {
      const std::lock_guard lock(mutex_);
      doing_ = doing;
      if (every_ <= 0) print(doing);
    };
  }

 private:
  using Clock = std::chrono::steady_clock;

  void tick(std::stop_token stop) {
    std::unique_lock lock(mutex_);
    const auto period = std::chrono::duration<double>(every_);
    // Wakes every period, or at once when the search is done (the jthread's stop request).
    while (!woken_.wait_for(lock, stop, period, [] { return false; }) && !stop.stop_requested())
      if (!doing_.empty()) print(doing_);
  }
  void print(const std::string& doing) const {
    char elapsed[32];
    std::snprintf(elapsed, sizeof elapsed, "%.1f s", std::chrono::duration<double>(Clock::now() - start_).count());
    std::cerr << "plan: " << doing << " (" << elapsed << ")" << std::endl;
  }

  double every_;
  Clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable_any woken_;
  std::string doing_;
  std::jthread ticker_;  // last: its destructor stops and joins it before the rest goes
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
      layer.erase("hot_rows");
      layer.erase("table_nodes");
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
  if (options.target_step_seconds) planner.target_step_seconds = options.target_step_seconds;
  if (options.memory_headroom) planner.memory_headroom = *options.memory_headroom;
  if (options.max_ranks) planner.max_ranks = *options.max_ranks;
  if (!options.hardware.empty()) {  // a path given here is the caller's, not the config's
    planner.hardware = std::filesystem::absolute(options.hardware).string();
    config.source["planner"]["hardware"] = planner.hardware;  // and so in the plan it writes
  }
  return config;
}

std::filesystem::path default_output(const PlanOptions& options, int ranks) {
  const std::string stem =
      options.config_path ? std::filesystem::path(*options.config_path).stem().string() : "default";
  return stem + ".plan" + std::to_string(ranks) + ".json";
}

int plan_command(const PlanOptions& options) {
  auto config = load_for_planning(options);
  std::optional<plan::CapacityAnswer> capacity;
  plan::ShardingPlan plan;
  int ranks = options.ranks;
  if (ranks == 0) {
    // Each candidate can take seconds (measured loads): say what is done as it is done.
    std::ostream& progress = options.json ? std::cerr : std::cout;
    capacity = plan::plan_capacity(config, [&](const plan::CapacityCandidate& candidate) {
      progress << "  tried " << candidate.ranks << " ranks: " << (candidate.kept ? "meets the targets" : "rejected")
               << std::endl;
    });
    ranks = capacity->ranks;
    plan = capacity->plan;
    config::resolve_batch_for_ranks(config, ranks);
  } else {
    config::resolve_batch_for_ranks(config, ranks);
    ProgressLines progress(options.progress_seconds);
    plan = plan::plan_sharding(config, ranks, progress.callback());
  }
  const auto planned = plan::planned_config(config, plan);
  run::check_config_for_ranks(planned, ranks);  // what `run` will check
  const std::filesystem::path output =
      options.output.empty() ? default_output(options, ranks) : std::filesystem::path(options.output);
  const auto directory = output.parent_path().empty() ? std::filesystem::path(".") : output.parent_path();
  if (!std::filesystem::is_directory(directory))
    throw InputError(output.string() + ": cannot write the plan: " + directory.string() + " is not a directory");
  if (const std::string why = why_not_replaceable(output); !why.empty())
    throw InputError(output.string() + ": cannot write the plan: " + why);
  AtomicFile file(output);
  // Its file fields (a trace, the hardware) said from the plan's directory, so that it runs there.
  const std::string text =
      config::rebase_relative_paths(plan.config, config.directory, output.parent_path()).dump(2) + "\n";
  file.write(text.data(), text.size());
  file.commit();
  // --json: stdout is the JSON document alone (json.load reads it); where the plan went is said
  // on stderr.
  std::ostream& said = options.json ? std::cerr : std::cout;
  if (options.json) {
    auto json = plan::plan_json(plan);
    if (capacity) json["capacity"] = plan::capacity_json(*capacity);
    std::cout << json.dump(2) << '\n';
  } else {
    if (capacity) plan::print_capacity(std::cout, *capacity);
    plan::print_plan(std::cout, plan);
    std::cout << '\n';
  }
  said << "plan written to " << output.string() << " (run it with: mpiexec -n " << ranks << " embscale run "
       << output.string() << ")\n";
  return 0;
}

}  // namespace

// `embscale plan` (subcommand_registry.hpp).
RunFunction define_plan(CLI::App& command, const Invocation&) {
  auto options = std::make_shared<PlanOptions>();
  auto config = std::make_shared<std::string>();
  command.add_option("config", *config, "config JSON file (default: the embedded default)");
  command
      .add_option("-r,--ranks", options->ranks,
                  "ranks to plan for (without it: the fewest ranks that meet the targets, planner.target_step_seconds "
                  "and planner.memory_per_rank less planner.memory_headroom)")
      ->check(CLI::Range(1, 1 << 20));
  command.add_option("-o,--output", options->output,
                     "where to write the planned config (default: <config stem>.plan<ranks>.json)");
  command.add_option("--set", options->settings, "FIELD=VALUE: override a config field, as in `run`; repeatable");
  command.add_flag("--all-layers", options->all_layers,
                   "plan every embedding layer, as if each said \"sharding\": \"auto\"");
  command.add_flag("--skew-blind", options->skew_blind,
                   "plan from table sizes and pooling factors only (TorchRec's planner), ignoring the key skew");
  command.add_flag("--json", options->json, "print the plan and its predictions as JSON instead of a table");
  command
      .add_option("--progress", options->progress_seconds,
                  "with --ranks: once the search has run this many seconds, say on stderr what it is doing, every "
                  "this many seconds (0: every step)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command.add_option("--memory-per-rank", options->memory_per_rank,
                     "bytes one rank may hold (K/M/G/T suffixes; default: planner.memory_per_rank, else this host's "
                     "memory over the ranks, less 15 %)");
  command.add_option("--seconds-per-key", options->seconds_per_key, "cost of a key routed, de-duplicated or pooled");
  command.add_option("--seconds-per-row", options->seconds_per_row, "cost of a distinct row looked up or updated");
  command.add_option("--seconds-per-byte", options->seconds_per_byte, "cost of a byte read or written in memory");
  command.add_option("--seconds-per-comm-byte", options->seconds_per_comm_byte, "cost of a byte sent or received");
  command.add_option("--seconds-per-collective", options->seconds_per_collective, "fixed cost of a collective call");
  command
      .add_option("--target-step-seconds", options->target_step_seconds,
                  "without --ranks: the predicted step a plan must not exceed (planner.target_step_seconds)")
      ->check(CLI::Range(1e-9, 3600.0));
  command
      .add_option("--memory-headroom", options->memory_headroom,
                  "without --ranks: the share of the memory per rank a plan leaves free (planner.memory_headroom)")
      ->check(CLI::Range(0.0, 0.9));
  command.add_option("--hardware", options->hardware,
                     "a hardware description (bench/hardware/*.json): the memory per device and the costs of its "
                     "memory and links (planner.hardware)");
  command
      .add_option("--max-ranks", options->max_ranks,
                  "without --ranks: the largest rank count to try (planner.max_ranks, default 65536)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 20));
  return [options, config] {
    if (!config->empty()) options->config_path = *config;
    return plan_command(*options);
  };
}

}  // namespace embscale::cli
