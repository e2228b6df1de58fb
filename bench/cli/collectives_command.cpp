// `embscale collectives`: nccl-tests' sweep over comm::Communicator, each call also made as bare
// MPI (OSU's timing), every result checked, and alltoallv with the skewed counts of an embedding
// layer's exchange beside the equal counts of osu_alltoallv (lib/collectives/README.md); or, with
// --replay, the collectives of schemes' training steps replayed against bare MPI.
#include <iostream>
#include <memory>
#include <optional>

#include "bench/cli/collectives_options.hpp"
#include "bench/cli/run_report.hpp"
#include "bench/cli/run_setup.hpp"
#include "bench/cli/subcommand_registry.hpp"
#include "collectives/bare_mpi.hpp"
#include "collectives/bare_nccl.hpp"
#include "collectives/benchmark_run.hpp"
#include "collectives/collectives_report.hpp"
#include "collectives/scheme_replay.hpp"
#include "collectives/skewed_traffic.hpp"
#include "collectives/step_capture.hpp"
#include "comm/failure.hpp"
#include "comm/mpi_communicator.hpp"
#include "config/workload_summary.hpp"
#include "core/error.hpp"
#include "core/stop_request.hpp"
#include "report/metadata.hpp"
#include "report/writer.hpp"
#include "run/gpu_rank.hpp"

namespace embscale::cli {
namespace {

using collectives::CaseResult;
using collectives::CaseSpec;
using collectives::Placement;

// The skewed counts and what the report says about them.
struct Skew {
  collectives::SkewedTraffic traffic;
  collectives::CaseContext context;
  std::string config_json;
};

Skew capture_skew(comm::MpiCommunicator& world, const CollectivesOptions& options, const CollectivesPlan& plan) {
  auto [config, source, sharding_plan] =
      load_config_agreed(world, options.config_path, options.settings, false, [&](config::Config& c) {
        if (!options.scheme) return;
        try {
          collectives::set_layer_scheme(c.embeddings.front(), *options.scheme);
        } catch (const InputError& e) {
          throw InputError(std::string("--scheme: ") + e.what());
        }
      });
  Skew skew;
  comm::run_agreed(
      world, [&] { skew.traffic = collectives::capture_skewed_traffic(world, config, plan.settings.iterations); });
  skew.context.ranks = world.size();
  skew.context.scheme = skew.traffic.scheme;
  skew.context.zipf_alpha = config::summarize_workload(config.data).zipf_alpha;
  skew.config_json = config.source.dump();
  return skew;
}

// Runs every case of the plan, writing each as a run of the report; returns the wrong elements.
class CaseSweep {
 public:
  // `gpu`: --backend nccl's rank (its NCCL communicator and the bare NCCL calls); null for MPI.
  CaseSweep(comm::MpiCommunicator& world, const CollectivesPlan& plan, report::ReportWriter& writer,
            const run::GpuRank* gpu)
      : world_(world), bare_(world), plan_(plan), writer_(writer) {
    if (gpu) {
      bare_nccl_.emplace(*gpu->nccl());
      nccl_ = collectives::NcclBackend{gpu->nccl(), &*bare_nccl_};
    }
  }

  std::uint64_t wrong() const noexcept { return wrong_; }
  std::vector<report::SummaryRow>& summary() noexcept { return summary_; }

  // Every type, op, root and size of one collective under one kind of counts.
  void run_collective(const collectives::CollectiveBench& bench, const std::string& counts,
                      const collectives::CaseContext& context) {
    const auto& traits = bench.traits();
    CaseSpec spec;
    spec.bench = &bench;
    spec.counts = counts;
    if (world_.rank() == 0) std::cout << collectives::table_header(spec, plan_.settings, world_.size()) << std::flush;
    const std::vector<comm::ReduceOp> ops =
        traits.reduces ? plan_.ops : std::vector<comm::ReduceOp>{comm::ReduceOp::kSum};
    const std::vector<int> roots = traits.rooted ? plan_.roots : std::vector<int>{0};
    for (const auto& type : plan_.types)
      for (const auto op : ops)
        for (const int root : roots) {
          spec.type = type;
          spec.op = op;
          spec.root = root;
          double previous_size = -1;
          for (const std::uint64_t bytes : plan_.sizes) {
            spec.requested_bytes = bytes;
            // Skewed counts scale whole rows: sizes below one element per row give the same call.
            if (counts == "skewed" &&
                bench.layout(bytes / type.bytes, type.bytes, 0, world_.size()).size_bytes == previous_size)
              continue;
            std::optional<CaseResult> out_of_place, in_place;
            if (traits.out_of_place) out_of_place = run_case(spec, Placement::kOutOfPlace, context);
            if (traits.in_place) in_place = run_case(spec, Placement::kInPlace, context);
            const CaseResult& any = out_of_place ? *out_of_place : *in_place;
            previous_size = any.layout.size_bytes;
            if (world_.rank() == 0)
              std::cout << collectives::table_line(spec, out_of_place ? &*out_of_place : nullptr,
                                                   in_place ? &*in_place : nullptr)
                        << std::flush;
          }
        }
  }

 private:
  CaseResult run_case(CaseSpec spec, Placement placement, const collectives::CaseContext& context) {
    // A signal stops the sweep between cases, on every rank (no report: the writer removes it).
    if (const int signal = comm::any_rank_stopping(world_))
      throw StopRequested("embscale collectives: stopped by " + signal_name(signal) + " (no report written)");
    spec.placement = placement;
    CaseResult result = collectives::run_case(world_, bare_.get(), spec, plan_.settings, nccl_ ? &*nccl_ : nullptr);
    if (!result.wrong_examples.empty()) {
      std::string text;
      for (const auto& example : result.wrong_examples)
        text += "embscale collectives: rank " + std::to_string(world_.rank()) + ", " + collectives::case_id(spec) +
                ": " + example + "\n";
      std::cerr << text << std::flush;
    }
    if (result.wrong > 0 && world_.rank() == 0)
      std::cerr << "embscale collectives: " << collectives::case_id(spec) << ": " << result.wrong
                << " wrong elements over all ranks\n";
    wrong_ += result.wrong;
    writer_.write_run(collectives::make_case_record(spec, plan_.settings, result, context));
    summary_.push_back(collectives::make_case_summary(spec, plan_.settings, result, context));
    return result;
  }

  comm::MpiCommunicator& world_;
  collectives::BareCommunicator bare_;
  std::optional<collectives::BareNccl> bare_nccl_;
  std::optional<collectives::NcclBackend> nccl_;
  const CollectivesPlan& plan_;
  report::ReportWriter& writer_;
  std::vector<report::SummaryRow> summary_;
  std::uint64_t wrong_ = 0;
};

// --replay: each scheme's step of the config, replayed and written as runs of the report.
int replay_schemes(comm::MpiCommunicator& world, const CollectivesOptions& options, const CollectivesPlan& plan) {
  // Every config first (a bad one is refused before the report is opened), each with its scheme.
  std::vector<config::Config> configs;
  for (const std::string& scheme : plan.replay_schemes) {
    auto agreed = load_config_agreed(world, options.config_path, options.settings, false, [&](config::Config& c) {
      try {
        collectives::set_layer_scheme(c.embeddings.front(), scheme);
      } catch (const InputError& e) {
        throw InputError("--replay " + scheme + ": " + e.what());
      }
    });
    configs.push_back(std::move(agreed.config));
  }
  const std::filesystem::path output = agreed_output_path(world, options.output_path, "collectives");
  std::optional<report::ReportWriter> writer;
  comm::run_agreed(world, [&] {
    writer.emplace(world, output,
                   report::collect_run_metadata(world, options.command_line, configs.front().source.dump(),
                                                report::kCollectivesReport));
  });
  std::vector<report::SummaryRow> summary;
  bool wrong = false;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (const int signal = comm::any_rank_stopping(world))
      throw StopRequested("embscale collectives: stopped by " + signal_name(signal) + " (no report written)");
    collectives::SchemeReplay replay;
    comm::run_agreed(world, [&] {
      try {
        replay = collectives::replay_scheme_step(world, configs[i], plan.settings);
      } catch (const InputError& e) {
        throw InputError("--replay " + plan.replay_schemes[i] + ": " + e.what());
      }
    });
    if (world.rank() == 0) std::cout << collectives::replay_table(replay, plan.settings, world.size()) << std::flush;
    if (!replay.wrong.empty()) {
      std::cerr << "embscale collectives: rank " + std::to_string(world.rank()) + ", replay of " + replay.scheme +
                       ": " + replay.wrong + "\n"
                << std::flush;
      wrong = true;
    }
    const collectives::CaseContext context{world.size(), replay.scheme,
                                           config::summarize_workload(configs[i].data).zipf_alpha};
    for (const auto& record : collectives::make_replay_records(replay, plan.settings, context))
      writer->write_run(record);
    for (auto& row : collectives::make_replay_summary(replay, plan.settings, context))
      summary.push_back(std::move(row));
  }
  writer->write_summary(summary);
  writer->commit();
  if (world.rank() == 0) std::cout << "#\nreport: " << output.string() << '\n';
  return wrong ? kExitFailure : 0;
}

}  // namespace

int collectives_command(const CollectivesOptions& options) {
  install_stop_signal_handlers();
  comm::MpiCommunicator world;
  CollectivesPlan plan;
  comm::run_agreed(world, [&] { plan = plan_collectives(options, world.size()); });
  if (!plan.replay_schemes.empty()) return replay_schemes(world, options, plan);
  // --backend nccl: each rank takes the GPU of its local rank (NCCL: one per GPU) and joins NCCL,
  // before anything else runs: a machine without them is refused first (exit 2).
  std::unique_ptr<run::GpuRank> gpu;
  if (plan.nccl) {
    const auto placement = run::place_on_hosts(world);
    comm::run_agreed(world, [&] {
      gpu = run::GpuRank::open(world, placement, placement.local_rank(world.size()), true, "--backend nccl");
    });
  }
  std::optional<Skew> skew;
  if (plan.skewed_counts) skew = capture_skew(world, options, plan);
  const std::filesystem::path output = agreed_output_path(world, options.output_path, "collectives");

  std::optional<report::ReportWriter> writer;
  comm::run_agreed(world, [&] {
    auto metadata = report::collect_run_metadata(world, options.command_line, skew ? skew->config_json : "",
                                                 report::kCollectivesReport);
    metadata.attributes["comm_backend"] = options.backend;
    if (gpu) record_gpu(world, *gpu, metadata);
    writer.emplace(world, output, std::move(metadata));
  });

  CaseSweep sweep(world, plan, *writer, gpu.get());
  const collectives::CaseContext equal_context{world.size(), "none", 0.0};
  for (const auto* entry : plan.collectives) {
    const auto bench = entry->make();
    if (entry->name != "alltoallv" || plan.equal_counts) sweep.run_collective(*bench, "equal", equal_context);
    if (entry->name == "alltoallv" && skew) {
      const auto skewed = collectives::make_skewed_alltoallv(skew->traffic);
      sweep.run_collective(*skewed, "skewed", skew->context);
    }
  }
  writer->write_summary(sweep.summary());
  writer->commit();
  if (world.rank() == 0) std::cout << "#\nreport: " << output.string() << '\n';
  if (sweep.wrong() > 0) {
    if (world.rank() == 0)
      std::cerr << "embscale collectives: the data check found " << sweep.wrong()
                << " wrong elements (the report's /summary has them per run, column `wrong`)\n";
    return kExitFailure;
  }
  return 0;
}

// `embscale collectives` (subcommand_registry.hpp).
RunFunction define_collectives(CLI::App& command, const Invocation& invocation) {
  struct Parsed {
    CollectivesOptions options;
    std::string config, output, scheme, replay;
  };
  auto parsed = std::make_shared<Parsed>();
  auto& o = parsed->options;
  command.add_option("collectives", o.names,
                     "what to measure (default all): allreduce allgather reduce_scatter alltoall bcast reduce sendrecv "
                     "alltoallv");
  // An option whose value --help shows as its default.
  const auto with_default = [&command](const std::string& name, auto& value, const std::string& help) {
    command.add_option(name, value, help)->capture_default_str();
  };
  with_default("-b,--minbytes", o.min_bytes, "smallest size in bytes, suffix K, M, G or T (1K = 1024)");
  with_default("-e,--maxbytes", o.max_bytes, "largest size (at most 1T = 2^40 bytes)");
  command.add_option("-f,--stepfactor", o.factor, "multiply each size by this whole number >= 2 (default 2)");
  command.add_option("-i,--stepbytes", o.step_bytes, "add this many bytes to each size instead of -f");
  with_default("-n,--iters", o.iterations, "timed calls per side and round");
  with_default("-w,--warmup_iters", o.warmup, "untimed calls per side first");
  with_default("-c,--check", o.checks, "checked calls per case; 0: no data check");
  with_default("-a,--average", o.average,
               "the time over ranks: 0 rank 0's, 1 the average, 2 the minimum, 3 the maximum");
  with_default("-z,--blocking", o.blocking,
               "1: blocking calls (MPI_Allreduce...); 0: non-blocking calls each completed by a wait "
               "(nccl-tests' default is 0: an asynchronous launch, which a CPU collective has no equivalent of)");
  with_default("-d,--datatype", o.type,
               "int8 uint8 int32 uint32 int64 uint64 half float double bfloat16, a comma-separated list, or all");
  with_default("--op", o.op,
               "reduction: sum prod max min avg, a list, or all (nccl-tests' -o; here -o names the report)");
  with_default("-r,--root", o.root, "root of bcast and reduce: a rank, or all");
  with_default("--rounds", o.rounds, "rounds of -n calls per side; the side that goes first alternates by round");
  command.add_flag("--no-baseline", o.no_baseline, "do not time the bare MPI calls");
  command.add_flag("--barrier", o.barrier,
                   "OSU's timing: an untimed barrier after every call, so each starts with the ranks aligned "
                   "(default: nccl-tests' calls back to back)");
  command.add_flag("--calibrate", o.calibrate,
                   "time bare MPI on both sides (the Communicator still runs the check): the overhead column is then "
                   "the harness's own noise floor");
  with_default("--counts", o.counts,
               "alltoallv's counts: equal (osu_alltoallv), skewed (a scheme's key exchange) or both");
  command.add_option(
      "--config", parsed->config,
      "config whose data and first embedding layer make the skewed counts (default: the embedded default)");
  command.add_option("--set", o.settings, "FIELD=VALUE: override a field of that config; repeatable");
  command.add_option("--scheme", parsed->scheme, "route the skewed counts by this scheme instead of the config's");
  command.add_option("--replay", parsed->replay,
                     "SCHEME[,SCHEME...] or all: replay each scheme's training step on the config (its first layer, "
                     "iteration 0) call by call against bare MPI, instead of the size sweep; -n, -w, --rounds and "
                     "--calibrate apply");
  command.add_option("-o,--output", parsed->output, "report path (default: results/collectives/<UTC timestamp>.h5)");
  with_default("--backend", o.backend,
               "mpi: the MPI Communicator on host buffers; nccl: the NCCL Communicator on device buffers, one GPU per "
               "rank (its local rank), bare NCCL as the baseline");
  return [parsed, command_line = invocation.command_line] {
    CollectivesOptions& options = parsed->options;
    if (!parsed->config.empty()) options.config_path = parsed->config;
    if (!parsed->output.empty()) options.output_path = parsed->output;
    if (!parsed->scheme.empty()) options.scheme = parsed->scheme;
    if (!parsed->replay.empty()) options.replay = parsed->replay;
    options.command_line = command_line;
    return collectives_command(options);
  };
}

}  // namespace embscale::cli
