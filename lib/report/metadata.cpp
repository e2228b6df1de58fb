#include "report/metadata.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/build_info.hpp"
#include "core/timer.hpp"
#include "report/collective.hpp"
#include "report/mpi_transport.hpp"

extern char** environ;  // POSIX; unistd.h declares it only with _GNU_SOURCE

namespace embscale::report {
namespace {

constexpr std::size_t kHostNameBytes = 256;  // HOST_NAME_MAX is 64 on Linux; room to spare

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(first, last - first + 1));
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) return "unknown";
  return trim(std::string_view(text, static_cast<std::size_t>(std::max(length, 0))));
}

// OMPI_MCA_* and UCX_* variables, sorted: how MPI was tuned (OpenMPI has no API that reports
// the pml or transport it picked, so the environment is the record).
std::string mpi_environment() {
  std::vector<std::string> vars;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view var(*e);
    if (var.starts_with("OMPI_MCA_") || var.starts_with("UCX_")) vars.emplace_back(var);
  }
  std::sort(vars.begin(), vars.end());
  std::string out;
  for (const auto& var : vars) out += (out.empty() ? "" : "\n") + var;
  return out;
}

// The value after "key<spaces>:" of the first line starting with `key` in a /proc text file.
std::string proc_value(const std::string& file, std::string_view key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (std::string_view(line).starts_with(key)) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return trim(std::string_view(line).substr(colon + 1));
    }
  return "";
}

// "AMD EPYC 7B13, 2 logical cores, 24564104 kB memory" for rank 0's host.
std::string machine_description() {
  std::string cpu = proc_value("/proc/cpuinfo", "model name");
  if (cpu.empty()) cpu = proc_value("/proc/cpuinfo", "Model");  // Arm, POWER
  if (cpu.empty()) cpu = "unknown CPU";
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const std::string memory = proc_value("/proc/meminfo", "MemTotal");
  return cpu + ", " + std::to_string(cores) + " logical cores, " + (memory.empty() ? std::string("unknown") : memory) +
         " memory";
}

// Models of the NVIDIA GPUs the driver lists, sorted ("none" without driver or GPUs).
std::string gpu_description() {
  std::vector<std::string> models;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/driver/nvidia/gpus", ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string model = proc_value((it->path() / "information").string(), "Model");
    models.push_back(model.empty() ? it->path().filename().string() : model);
  }
  if (models.empty()) return "none";
  std::sort(models.begin(), models.end());
  std::string out;
  for (const auto& m : models) out += (out.empty() ? "" : ", ") + m;
  return out;
}

// "nodeA (2 ranks), nodeB (1 rank)", hosts sorted by name; meaningful on rank 0.
std::string hosts_on_root(comm::Communicator& comm) {
  std::array<char, kHostNameBytes> mine{};
  if (gethostname(mine.data(), mine.size() - 1) != 0) std::strncpy(mine.data(), "unknown", mine.size() - 1);
  const auto all = comm.gather(mine, 0);
  std::map<std::string, int> ranks_per_host;
  for (const auto& host : all) ++ranks_per_host[std::string(host.data())];
  std::string out;
  for (const auto& [host, n] : ranks_per_host)
    out += (out.empty() ? "" : ", ") + host + " (" + std::to_string(n) + (n == 1 ? " rank)" : " ranks)");
  return out;
}

}  // namespace

RunMetadata collect_run_metadata(comm::Communicator& comm, const std::string& command_line,
                                 const std::string& config_json, std::string_view kind) {
  const bool root = comm.rank() == 0;
  const std::string hosts = hosts_on_root(comm);
  // Names and rank 0's values, in one order on every rank.
  const std::vector<std::string> names{
      "created_utc", "command_line", "config_json", "mpi_library_version", "mpi_environment", "mpi_transport",
      "hosts",       "machine",      "gpu",         "slurm_job_id"};
  std::vector<std::string> values(names.size());
  if (root) {
    const char* job = std::getenv("SLURM_JOB_ID");
    values = {utc_timestamp("%Y-%m-%dT%H:%M:%SZ"),
              command_line,
              config_json,
              mpi_library_version(),
              mpi_environment(),
              mpi_transport_description(),
              hosts,
              machine_description(),
              gpu_description(),
              job ? job : ""};
  }
  values = comm::broadcast_strings(comm, std::move(values));

  RunMetadata metadata;
  auto& a = metadata.attributes;
  for (std::size_t i = 0; i < names.size(); ++i) a[names[i]] = std::move(values[i]);
  a["schema_version"] = kReportSchemaVersion;
  a[std::string(kReportKindAttribute)] = std::string(kind);
  a["embscale_version"] = std::string(build_info::version());
  a["git_sha"] = std::string(build_info::git_sha());
  a["ranks"] = std::int64_t{comm.size()};
  // This library never loads CUDA; a run that uses kernels/ overwrites these with the versions
  // of the CUDA runtime and NCCL it loaded.
  a["cuda_version"] = std::string("not used");
  a["nccl_version"] = std::string("not used");
  return metadata;
}

}  // namespace embscale::report
