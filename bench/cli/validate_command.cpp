#include <iostream>
#include <memory>

#include "bench/cli/commands.hpp"
#include "bench/cli/subcommand_registry.hpp"
#include "config/config.hpp"
#include "workloads/workload_description.hpp"

namespace embscale::cli {

int validate_command(const std::string& config_path) {
  const auto config = config::load_config_file(config_path);
  std::cout << config_path << ": valid (schema version " << config.schema_version << ")\n"
            << "  data: " << config.data.format << ", " << config.data.slot_num << " slots\n";
  workloads::print_synthetic_slots(std::cout, config.data);
  for (const auto& emb : config.embeddings)
    std::cout << "  " << emb.name << ": " << emb.type << ", dim " << emb.embedding_vec_size << ", combiner "
              << config::to_string(emb.combiner) << '\n';
  std::cout << "  solver: batchsize " << config.solver.batchsize << ", " << config.solver.max_iter
            << " iterations (+" << config.solver.warmup_iter << " warm-up)\n";
  return 0;
}

// `embscale validate` (subcommand_registry.hpp).
RunFunction define_validate(CLI::App& command, const Invocation&) {
  auto path = std::make_shared<std::string>();
  command.add_option("config", *path, "config JSON file")->required();
  return [path] { return validate_command(*path); };
}

}  // namespace embscale::cli
