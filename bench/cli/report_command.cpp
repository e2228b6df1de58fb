#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <variant>

#include "bench/cli/commands.hpp"
#include "bench/cli/subcommand_registry.hpp"
#include "core/error.hpp"
#include "core/install_layout.hpp"
#include "report/reader.hpp"
#include "report/repetition_spread.hpp"
#include "report/summary.hpp"

extern char** environ;

namespace embscale::cli {
namespace {

std::string attribute_text(const report::ReportData& data, const std::string& name) {
  const auto it = data.attributes.find(name);
  if (it == data.attributes.end()) return "-";
  return std::visit(
      [](const auto& v) {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) return v;
        else return std::to_string(v);
      },
      it->second);
}

// One line per table name ("  table eviction/hit_rate: 100 x 5", rows x columns), over the runs
// that hold it: a range where their extents differ ("50-100 x 5"), and "in 2 of 4 runs" where not
// every run holds it. "" without tables.
std::string table_lines(const report::ReportData& data) {
  struct Extent {
    std::size_t min_rows = SIZE_MAX, max_rows = 0, min_columns = SIZE_MAX, max_columns = 0, runs = 0;
  };
  std::map<std::string, Extent> extents;
  for (const auto& run : data.runs)
    for (const auto& [name, table] : run.tables) {
      Extent& e = extents[name];
      e.min_rows = std::min(e.min_rows, table.rows());
      e.max_rows = std::max(e.max_rows, table.rows());
      e.min_columns = std::min(e.min_columns, table.columns.size());
      e.max_columns = std::max(e.max_columns, table.columns.size());
      ++e.runs;
    }
  const auto range = [](std::size_t low, std::size_t high) {
    return low == high ? std::to_string(low) : std::to_string(low) + "-" + std::to_string(high);
  };
  std::string out;
  for (const auto& [name, e] : extents) {
    out += "  table " + name + ": " + range(e.min_rows, e.max_rows) + " x " + range(e.min_columns, e.max_columns);
    if (e.runs < data.runs.size())
      out += " in " + std::to_string(e.runs) + " of " + std::to_string(data.runs.size()) + " runs";
    out += '\n';
  }
  return out;
}

std::string environment_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

// plot_report.py from the share folder beside the binary (core/install_layout.hpp: installed, or
// the build tree's links to results/), under Debian's Python (which has matplotlib and h5py from
// apt; a virtual environment's python3 first on PATH often has neither). EMBSCALE_PLOT_SCRIPT and
// EMBSCALE_PYTHON override both, for other copies and other interpreters.
int plot(const std::string& report_path, const std::string& directory) {
  const std::filesystem::path shared = shared_data_directory();
  const std::string script =
      environment_or("EMBSCALE_PLOT_SCRIPT", shared.empty() ? std::string() : (shared / "plot_report.py").string());
  const std::string python =
      environment_or("EMBSCALE_PYTHON", std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
  if (script.empty() || !std::filesystem::exists(script))
    throw InputError((script.empty() ? std::string("plot_report.py") : script) +
                     ": the plot script is missing (it is installed in <prefix>/share/embscale beside bin/embscale; "
                     "set EMBSCALE_PLOT_SCRIPT to results/plot_report.py of the sources)");
  std::vector<std::string> args{python, script, report_path, directory};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (const int error = posix_spawnp(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ))
    throw Error(python + ": cannot start the plot script: " + std::strerror(error));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw Error("waiting for the plot script: " + std::string(std::strerror(errno)));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  // The script printed its own message; say which step failed and keep bad input apart.
  if (code == kExitBadInput) throw InputError("plotting " + report_path + " failed (the message above says why)");
  throw Error("plotting " + report_path + " failed: " + script + " exited with " + std::to_string(code));
}

}  // namespace

int report_command(const ReportOptions& options) {
  const auto data = report::read_report(options.report_path);
  std::cout << options.report_path << "\n  report_kind: " << data.kind() << '\n';
  for (const char* name : {"embscale_version", "git_sha", "created_utc", "ranks", "hosts", "slurm_job_id"})
    std::cout << "  " << name << ": " << attribute_text(data, name) << '\n';
  for (const char* name : {"sweep_axes", "simulation"})  // a sweep's axes; a simulation's nature
    if (data.attributes.count(name)) std::cout << "  " << name << ": " << attribute_text(data, name) << '\n';
  std::cout << "  runs: " << data.runs.size() << '\n'
            << table_lines(data) << '\n'
            << report::format_summary_table(data.summary);
  if (const auto spread = report::format_repetition_spread(report::repetition_spread(data)); !spread.empty())
    std::cout << '\n' << spread;
  if (options.plot_directory) {
    std::error_code ec;
    std::filesystem::create_directories(*options.plot_directory, ec);
    if (ec) throw InputError(*options.plot_directory + ": cannot create the plot directory: " + ec.message());
    std::cout << '\n' << std::flush;
    return plot(options.report_path, *options.plot_directory);
  }
  return 0;
}

// `embscale report` (subcommand_registry.hpp).
RunFunction define_report(CLI::App& command, const Invocation&) {
  auto options = std::make_shared<ReportOptions>();
  command.add_option("report", options->report_path, "report HDF5 file")->required();
  command.add_option("--plot", options->plot_directory, "write PNG plots into this directory");
  return [options] { return report_command(*options); };
}

}  // namespace embscale::cli
