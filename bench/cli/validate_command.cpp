#include <iostream>
#include <memory>

#include "bench/cli/commands.hpp"
#include "bench/cli/subcommand_registry.hpp"
#include "config/config.hpp"
#include "workloads/workload_description.hpp"

namespace embscale::cli {

int validate_command(const std::string& config_path, bool embedding_only) {
  const auto config = config::load_config_file(config_path);
  config::check_runs_whole(config, embedding_only, config_path);  // as `run` would refuse it
  std::cout << config_path << ": valid (schema version " << config.schema_version << ")\n";
  if (!config.not_run.empty())
    std::cout << "  not run (--embedding-only): " << config::describe_not_run(config) << '\n';
  std::cout << "  data: " << config::to_string(config.data.format) << ", " << config.data.slot_num << " slots";
  if (config.data.format != config::DataFormat::kSynthetic)
    std::cout << ", source " << config::data_source_path(config).string();
  std::cout << '\n';
  if (config.data.format == config::DataFormat::kSynthetic) workloads::print_synthetic_slots(std::cout, config.data);
  for (const auto& emb : config.embeddings)
    std::cout << "  " << emb.name << ": " << emb.type << ", dim " << emb.embedding_vec_size << ", combiner "
              << config::to_string(emb.combiner) << '\n';
  std::cout << "  solver: batchsize " << config.solver.batchsize << ", " << config.solver.max_iter << " iterations (+"
            << config.solver.warmup_iter << " warm-up)\n";
  return 0;
}

// `embscale validate` (subcommand_registry.hpp).
RunFunction define_validate(CLI::App& command, const Invocation&) {
  struct Parsed {
    std::string path;
    bool embedding_only = false;
  };
  auto parsed = std::make_shared<Parsed>();
  command.add_option("config", parsed->path, "config JSON file")->required();
  command.add_flag("--embedding-only", parsed->embedding_only,
                   "accept a config embscale runs only in part (a HugeCTR file's dense layers, evaluation, ...), "
                   "as `run --embedding-only` does");
  return [parsed] { return validate_command(parsed->path, parsed->embedding_only); };
}

}  // namespace embscale::cli
