// embscale sweep: every point of a sweep file, each repetition its own report, then one merged
// report (lib/config/sweep_spec.hpp is the file format; lib/sweep/manifest.hpp the resume state).
//
// Order: repetition-major (every point once, then every point again), so that a drift of the
// machine over the sweep (thermal, a noisy neighbour) spreads over all points instead of
// landing on the last point's repetitions.
//
// Stopping: SIGTERM or SIGUSR1 sets a flag; the ranks agree on it at every iteration boundary
// (outside the timed region) and between runs. The run in progress is abandoned whole, finished
// runs stay in the manifest, and every rank exits with kExitStopped; `--resume` goes on.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "bench/cli/commands.hpp"
#include "bench/cli/run_report.hpp"
#include "bench/cli/run_setup.hpp"
#include "bench/cli/subcommand_registry.hpp"
#include "comm/failure.hpp"
#include "comm/mpi_communicator.hpp"
#include "config/sweep_spec.hpp"
#include "core/error.hpp"
#include "core/stop_request.hpp"
#include "core/temp_files.hpp"
#include "core/timer.hpp"
#include "report/disk_space.hpp"
#include "report/merge.hpp"
#include "report/metadata.hpp"
#include "report/reader.hpp"
#include "report/repetition_spread.hpp"
#include "report/writer.hpp"
#include "run/device_check.hpp"
#include "run/driver_choice.hpp"
#include "run/memory_check.hpp"
#include "run/training_run.hpp"
#include "sweep/manifest.hpp"
#include "workloads/batch_source_factory.hpp"

namespace embscale::cli {
namespace {

struct PlannedRun {
  const config::SweepPoint* point;
  std::int64_t repetition;
  std::string id;  // p<point>.r<repetition>, the point zero-padded so that files sort
};

std::vector<PlannedRun> plan_runs(const config::SweepSpec& spec) {
  const int width = static_cast<int>(std::to_string(spec.points.size() - 1).size());
  std::vector<PlannedRun> runs;
  for (std::int64_t rep = 0; rep < spec.repetitions; ++rep)
    for (const auto& point : spec.points) {
      char id[64];
      std::snprintf(id, sizeof id, "p%0*lld.r%lld", width, static_cast<long long>(point.index),
                    static_cast<long long>(rep));
      runs.push_back({&point, rep, id});
    }
  return runs;
}

std::filesystem::path points_directory(const std::filesystem::path& output) {
  auto dir = output;
  return dir.replace_extension(".points");
}

// The swept fields as report values (lib/config's AxisKind decides the column type).
std::vector<report::SummaryField> swept_parameters(const config::SweepSpec& spec, const config::SweepPoint& point) {
  std::vector<report::SummaryField> fields;
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    const auto& value = point.settings[a].value;
    if (spec.axes[a] == config::kRanksField) continue;  // the "ranks" parameter says it already
    switch (spec.axis_kinds[a]) {
      case config::AxisKind::kInteger: fields.push_back({spec.axes[a], value.get<std::int64_t>()}); break;
      case config::AxisKind::kNumber: fields.push_back({spec.axes[a], value.get<double>()}); break;
      case config::AxisKind::kText: fields.push_back({spec.axes[a], value.get<std::string>()}); break;
      case config::AxisKind::kJson: fields.push_back({spec.axes[a], value.dump()}); break;
    }
  }
  return fields;
}

std::string format_duration(double seconds) {
  char text[32];
  const auto s = static_cast<long long>(seconds + 0.5);
  if (s >= 3600) std::snprintf(text, sizeof text, "%lldh%02lldm", s / 3600, s / 60 % 60);
  else if (s >= 60) std::snprintf(text, sizeof text, "%lldm%02llds", s / 60, s % 60);
  else std::snprintf(text, sizeof text, "%llds", s);
  return text;
}

// Collective over the point's communicator: runs it and writes its report to `path`.
void run_point(comm::Communicator& comm, const config::SweepSpec& spec, const PlannedRun& planned,
               const std::filesystem::path& path, const SweepOptions& options, const std::string& prefix) {
  auto config = planned.point->config;
  // Each run's incremental dumps and checkpoints in a directory of its own (one per run id).
  if (auto& dump = config.solver.incremental_dump; dump.runs())
    dump.directory = (std::filesystem::path(dump.directory) / planned.id).string();
  if (auto& checkpoint = config.solver.checkpoint; checkpoint.saves())
    checkpoint.directory = (std::filesystem::path(checkpoint.directory) / planned.id).string();
  const std::int64_t given_memory_per_rank = config.planner ? config.planner->memory_per_rank : 0;
  agree_planner_memory(comm, config);
  const auto placement = run::place_on_hosts(comm);
  std::optional<plan::ShardingPlan> plan;
  comm::run_agreed(comm, [&] {
    plan = plan::plan_for_run(config, comm.size());
    run::check_host_memory(
        config, comm.size(), comm.rank(),
        run::memory_share(given_memory_per_rank, run::node_available_memory(), placement.ranks_here(comm.size())));
  });
  std::optional<report::ReportWriter> writer;
  comm::run_agreed(comm, [&] {
    writer.emplace(comm, path, report::collect_run_metadata(comm, options.command_line, config.source.dump()));
  });
  comm::run_agreed(comm, [&] {
    writer->claim_space(
        report::expected_report_bytes(1, config.solver.max_iter, comm.size(), config.source.dump().size()));
  });
  const auto stop_check = [&comm] { return comm::any_rank_stopping(comm); };
  std::unique_ptr<BatchSource> source;
  comm::run_agreed(comm, [&] { source = workloads::make_batch_source(config); });
  const auto run = run::train(comm, config, *source, options.quiet ? nullptr : &std::cout, stop_check, prefix);

  report::RunRecord record = make_run_record(planned.id, config, comm.size(), run, plan ? &*plan : nullptr);
  auto swept = swept_parameters(spec, *planned.point);
  record.parameters.insert(record.parameters.begin(), swept.begin(), swept.end());
  record.point = planned.point->index;
  record.repetition = planned.repetition;
  report::SummaryRow row = make_summary_row(planned.id, config, comm.size(), run);
  swept.insert(swept.begin(), {{"point", planned.point->index}, {"repetition", planned.repetition}});
  row.insert(row.begin() + 1, swept.begin(), swept.end());  // after run_id
  writer->write_run(record);
  writer->write_summary({row});
  writer->commit();
}

// Every rank: the signal that stopped this rank's part of the run (0: none); returns the
// agreement over the world. Ranks outside the point wait here without spinning: MPI's blocking
// wait would busy-poll a core for the whole run and slow the ranks that are measuring.
int signal_that_stopped_the_run(comm::Communicator& world, int stopped_by, bool member) {
  const std::int32_t mine = stopped_by;
  std::int32_t any = 0;
  auto request =
      world.iallreduce(std::span<const std::int32_t>(&mine, 1), std::span<std::int32_t>(&any, 1), comm::ReduceOp::kMax);
  if (member) request.wait();
  else
    while (!request.test()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return any;
}

// "<sweep>: point 3 (<its settings>) at 4 ranks: ", to open a message about the point.
std::string describe_point(const config::SweepSource& source, const config::SweepPoint& point, int ranks) {
  return source.origin + ": point " + std::to_string(point.index) + " (" + config::describe_settings(point.settings) +
         ") at " + std::to_string(ranks) + " ranks: ";
}

// Collective: rank 0 reads the files, every rank parses the same bytes and checks every point
// (its config, its rank count) before anything runs.
config::SweepSpec load_sweep(comm::Communicator& world, const SweepOptions& options, config::SweepSource& source) {
  comm::run_agreed(world, [&] {
    if (world.rank() == 0) source = config::read_sweep_source(options.sweep_path);
  });
  auto texts = comm::broadcast_strings(world, {source.origin, source.text, source.base_origin, source.base_text});
  source = {texts[0], texts[1], texts[2], texts[3]};
  config::SweepSpec spec;
  comm::run_agreed(world, [&] { spec = config::parse_sweep(source); });
  // Every rank parsed the same sweep, so all gather their hosts (a collective): the GPUs and the
  // memory a rank may take are per host.
  const auto placement = run::place_on_hosts(world);
  const auto node_memory = run::node_available_memory();
  comm::run_agreed(world, [&] {
    // Per trace, the point that reads the most of it: its samples are checked once, after the loop.
    std::map<std::string, std::pair<std::int64_t, const config::SweepPoint*>> most_read;
    for (auto& point : spec.points) {
      const int ranks = point.ranks ? point.ranks : world.size();
      if (ranks > world.size())
        throw InputError(source.origin + ": point " + std::to_string(point.index) + " asks for " +
                         std::to_string(ranks) + " ranks; the job has " + std::to_string(world.size()));
      try {
        run::check_devices(point.config, placement, ranks);
        config::check_runs_whole(point.config, options.embedding_only, source.base_origin);
        if (options.embedding_only) config::keep_embedding_part(point.config);
        config::resolve_batch_for_ranks(point.config, ranks);
        // An "auto" layer is planned when its point runs (plan::plan_for_run); here only whether
        // a plan fits and runs on this many ranks.
        auto planned = point.config;
        const std::int64_t given_memory_per_rank = planned.planner ? planned.planner->memory_per_rank : 0;
        if (plan::has_auto_layers(planned)) (void)plan::plan_for_run(planned, ranks);
        run::check_training_for_ranks(planned, ranks);
        if (planned.solver.checkpoint.resumes())
          throw InputError(
              "solver.checkpoint.resume_from: a sweep resumes by its manifest (sweep --resume), not "
              "from a checkpoint; resume one run with run --resume-from");
        // The fullest rank's tables against this host's share (each point checks again when it
        // runs, against the memory then available).
        run::check_host_memory(planned, ranks, std::nullopt,
                               run::memory_share(given_memory_per_rank, node_memory, placement.ranks_here(ranks)));
        // A trace is opened now (its headers, its length against the point's iterations); a
        // generated source has nothing to check.
        if (point.config.data.format != config::DataFormat::kSynthetic) {
          (void)workloads::make_batch_source(point.config);
          auto& most = most_read[config::data_source_path(point.config).string()];
          if (!most.second || workloads::run_samples(point.config) > most.first)
            most = {workloads::run_samples(point.config), &point};
        }
      } catch (const InputError& e) {
        throw InputError(describe_point(source, point, ranks) + e.what());
      }
    }
    // Every sample the points read, read once before any runs (trace_check; rank 0 reads, all
    // agree). Points over one trace are taken to read it alike (its format and key spaces).
    for (const auto& [path, most] : most_read) {
      const auto& point = *most.second;
      try {
        if (world.rank() == 0) (void)workloads::check_run_samples(point.config);
      } catch (const InputError& e) {
        throw InputError(describe_point(source, point, point.ranks ? point.ranks : world.size()) + e.what());
      }
    }
    run::check_run_environment();
  });
  return spec;
}

// What rank 0 found in the points directory, for every rank.
struct OpenedManifest {
  std::string done_ids;            // the finished runs, one per line
  std::int64_t removed_temps = 0;  // temporary files of abandoned runs, removed
};

// Collective: creates or (with --resume) loads the manifest on rank 0, after checking that the
// output and the manifest can be created (bad input, exit 2, before any run starts).
// The points directory belongs to this sweep and one launch works on it at a time, so every
// temporary file found in it is an abandoned run's (a rank killed outright, a job ended by its
// launcher before the ranks could clean up) and is removed, whichever host wrote it.
OpenedManifest open_manifest(comm::Communicator& world, const SweepOptions& options, const config::SweepSpec& spec,
                             std::int64_t total, std::optional<sweep::Manifest>& manifest) {
  const std::filesystem::path output = options.output_path;
  const auto directory = points_directory(output);
  OpenedManifest opened;
  comm::run_agreed(world, [&] {
    if (world.rank() != 0) return;
    check_file_can_be_created(output, "report");
    const bool exists = std::filesystem::exists(sweep::Manifest::path_in(directory));
    if (exists && !options.resume)
      throw InputError(directory.string() + ": holds a sweep already; pass --resume to go on with it, or remove it");
    std::error_code ec;
    std::filesystem::create_directories(directory, ec);
    if (ec) throw InputError(directory.string() + ": cannot create the points directory: " + ec.message());
    check_file_can_be_created(sweep::Manifest::path_in(directory), "the sweep manifest");
    opened.removed_temps = static_cast<std::int64_t>(remove_temp_files_in(directory).size());
    manifest = exists ? sweep::Manifest::load(directory, spec.digest, total)
                      : sweep::Manifest::create(directory, spec.digest, total);
    for (const auto& entry : manifest->done()) opened.done_ids += entry.run_id + "\n";
  });
  auto texts = comm::broadcast_strings(world, {opened.done_ids, std::to_string(opened.removed_temps)});
  return {texts[0], std::stoll(texts[1])};
}

// Collective: one run on the first `ranks` ranks of the world (the others wait without
// spinning). Throws StopRequested on every rank when a signal stopped it.
void run_on_first_ranks(comm::Communicator& world, int ranks, const config::SweepSpec& spec, const PlannedRun& run,
                        const std::filesystem::path& file, const SweepOptions& options, std::int64_t finished,
                        std::int64_t total) {
  const bool member = world.rank() < ranks;
  // Every rank takes part in the split; ranks beyond the point's count get their own group.
  auto point_comm = world.split(member ? 0 : 1, world.rank());
  int stopped_by = 0;
  if (member) {
    try {
      run_point(*point_comm, spec, run, file, options, "  " + run.id + " ");
    } catch (const StopRequested&) {
      stopped_by = std::max(stop_signal(), 1);  // every member agreed; the others learn it below
    } catch (const comm::AgreedFailure& failure) {
      // Agreed (and printed) among this run's ranks only: the ranks outside it wait below and
      // would never hear of it, so end the whole job here instead of returning.
      if (ranks < world.size()) {
        comm::end_all_ranks(failure.exit_code);
      }
      throw;
    }
  }
  if (const int signal = signal_that_stopped_the_run(world, stopped_by, member))
    throw StopRequested("stopped by " + signal_name(signal) + " during run " + run.id + "; " +
                        std::to_string(finished) + " of " + std::to_string(total) +
                        " runs are done; resume with --resume");
}

// Collective: rank 0 merges every run's report, in plan order, into the output.
void merge_sweep(comm::Communicator& world, const SweepOptions& options, const config::SweepSource& source,
                 const config::SweepSpec& spec, const std::vector<PlannedRun>& planned) {
  auto metadata = report::collect_run_metadata(world, options.command_line, spec.base.source.dump()).attributes;
  metadata["sweep_json"] = source.text;
  std::string axes;
  for (const auto& axis : spec.axes) axes += (axes.empty() ? "" : ",") + axis;
  metadata["sweep_axes"] = axes;
  metadata["sweep_repetitions"] = spec.repetitions;
  const auto directory = points_directory(options.output_path);
  std::vector<std::filesystem::path> inputs;
  for (const auto& run : planned) inputs.push_back(directory / (run.id + ".h5"));
  comm::run_agreed(world, [&] {
    if (world.rank() == 0) report::merge_reports(inputs, options.output_path, metadata);
  });
}

}  // namespace

int sweep_command(const SweepOptions& options) {
  install_stop_signal_handlers();
  comm::MpiCommunicator world;
  const bool root = world.rank() == 0;

  config::SweepSource source;
  const config::SweepSpec spec = load_sweep(world, options, source);
  const auto planned = plan_runs(spec);
  const auto total = static_cast<std::int64_t>(planned.size());
  if (options.dry_run) {  // checked above like a real sweep; nothing is written
    if (root) {
      std::cout << source.origin << ": " << spec.points.size() << " points x " << spec.repetitions
                << " repetitions = " << total << " runs\n";
      for (const auto& point : spec.points)
        std::cout << "  point " << point.index << " on " << (point.ranks ? point.ranks : world.size())
                  << " ranks: " << config::describe_settings(point.settings) << '\n';
    }
    return 0;
  }
  std::optional<sweep::Manifest> manifest;  // rank 0's
  const OpenedManifest opened = open_manifest(world, options, spec, total, manifest);
  const auto is_done = [&](const std::string& id) { return opened.done_ids.find(id + "\n") != std::string::npos; };
  std::int64_t already = 0;
  for (const auto& run : planned) already += is_done(run.id) ? 1 : 0;

  const auto directory = points_directory(options.output_path);
  const std::string what = std::to_string(spec.points.size()) + " points x " + std::to_string(spec.repetitions) +
                           " repetitions = " + std::to_string(total) + " runs on up to " +
                           std::to_string(world.size()) + " ranks" +
                           (already ? ", " + std::to_string(already) + " done before (resumed)" : "");
  if (root && !options.quiet) std::cout << "embscale sweep: " << what << "\npoints: " << directory.string() << "\n";
  if (root && opened.removed_temps)
    std::cerr << "note: removed " << opened.removed_temps << " temporary file(s) of abandoned runs in "
              << directory.string() << '\n';

  Stopwatch elapsed;
  std::int64_t finished_now = 0;
  for (std::int64_t i = 0; i < total; ++i) {
    const auto& run = planned[static_cast<std::size_t>(i)];
    if (is_done(run.id)) continue;
    if (const int signal = comm::any_rank_stopping(world))
      throw StopRequested("stopped by " + signal_name(signal) + " before run " + run.id);
    const int ranks = run.point->ranks ? run.point->ranks : world.size();
    if (root && !options.quiet) {
      const auto remaining = static_cast<double>(total - already - finished_now);
      const std::string eta =
          finished_now ? ", ETA " + format_duration(elapsed.seconds() / static_cast<double>(finished_now) * remaining)
                       : "";
      std::cout << "sweep: run " << (i + 1) << "/" << total << " " << run.id << " on " << ranks
                << (ranks == 1 ? " rank: " : " ranks: ") << config::describe_settings(run.point->settings) << eta
                << std::endl;
    }
    const auto file = directory / (run.id + ".h5");
    run_on_first_ranks(world, ranks, spec, run, file, options, already + finished_now, total);
    comm::run_agreed(world, [&] {
      if (root)
        manifest->mark_done({run.id, file.filename().string(), utc_timestamp("%Y-%m-%dT%H:%M:%SZ"),
                             std::getenv("SLURM_JOB_ID") ? std::getenv("SLURM_JOB_ID") : ""});
    });
    ++finished_now;
  }

  merge_sweep(world, options, source, spec, planned);
  if (root && options.quiet) {
    std::cout << "embscale sweep: " << what << "; report: " << options.output_path << '\n';
  } else if (root) {
    const auto merged = report::read_report(options.output_path);
    std::cout << '\n' << report::format_summary_table(merged.summary) << '\n';
    if (const auto spread = report::format_repetition_spread(report::repetition_spread(merged)); !spread.empty())
      std::cout << spread << '\n';
    std::cout << "report: " << options.output_path << '\n';
  }
  return 0;
}

// `embscale sweep` (subcommand_registry.hpp).
RunFunction define_sweep(CLI::App& command, const Invocation& invocation) {
  auto options = std::make_shared<SweepOptions>();
  options->command_line = invocation.command_line;
  command.add_option("sweep", options->sweep_path, "sweep JSON file")->required();
  command.add_option("-o,--output", options->output_path, "merged report; point reports go to <stem>.points/")
      ->required();
  command.add_flag("--resume", options->resume, "go on with the runs the manifest lacks (after a stop or a requeue)");
  command.add_flag("-q,--quiet", options->quiet,
                   "one line on success (the runs and the report); no progress or summary table");
  command.add_flag("--dry-run", options->dry_run, "check every point and print the plan; run and write nothing");
  command.add_flag("--embedding-only", options->embedding_only,
                   "run the embedding part of a base config that asks for more (as `run --embedding-only`)");
  return [options] { return sweep_command(*options); };
}

}  // namespace embscale::cli
