#include <mpi.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <optional>

#include "bench/cli/commands.hpp"
#include "bench/cli/run_report.hpp"
#include "comm/failure.hpp"
#include "comm/mpi_communicator.hpp"
#include "core/error.hpp"
#include "embedding/training_run.hpp"
#include "report/metadata.hpp"
#include "report/writer.hpp"

namespace embscale::cli {
namespace {

// results/runs/<UTC timestamp>[-<slurm job id>].h5, named on rank 0 so every rank agrees.
std::string default_output_path() {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  std::string name = stamp;
  if (const char* job = std::getenv("SLURM_JOB_ID")) name += std::string("-job") + job;
  return "results/runs/" + name + ".h5";
}

std::string broadcast_string(comm::Communicator& comm, std::string text) {
  std::uint64_t size = text.size();
  comm.bcast(std::span<std::uint64_t>(&size, 1), 0);
  text.resize(size);
  comm.bcast(std::span<char>(text.data(), text.size()), 0);
  return text;
}

}  // namespace

int run_command(const RunOptions& options) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const bool root = world.rank() == 0;

  std::optional<config::Config> config;
  comm::run_agreed(world, [&] {
    config = options.config_path ? config::load_config_file(*options.config_path) : config::default_config();
    embedding::check_config_for_ranks(*config, world.size());
  });

  std::filesystem::path output = broadcast_string(world, root ? options.output_path.value_or(default_output_path()) : "");
  if (!options.output_path) {
    comm::run_agreed(world, [&] {
      std::error_code ec;
      if (root) std::filesystem::create_directories(output.parent_path(), ec);
      if (ec) throw InputError(output.parent_path().string() + ": cannot create the report directory: " + ec.message());
    });
  }

  std::optional<report::ReportWriter> writer;
  comm::run_agreed(world, [&] {
    const auto metadata = report::collect_run_metadata(world, options.command_line, config->source.dump());
    writer.emplace(world, output, metadata);
  });

  if (root)
    std::cout << "embscale run: " << config->embeddings.front().type << " on " << world.size() << " ranks, "
              << config->solver.max_iter << " iterations of " << config->solver.batchsize << " samples\n";
  const auto run = embedding::run_training(world, *config, options.quiet ? nullptr : &std::cout);

  const std::string id = "run0";
  writer->write_run(make_run_record(id, *config, world.size(), run));
  const std::vector<report::SummaryRow> summary{make_summary_row(id, *config, world.size(), run.summary)};
  writer->write_summary(summary);
  writer->commit();

  if (root) std::cout << '\n' << report::format_summary_table(summary) << "\nreport: " << output.string() << '\n';
  return 0;
}

}  // namespace embscale::cli
