#include "report/metadata.hpp"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <array>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

extern char** environ;

namespace embscale::report {
namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  const auto first = s.find_first_not_of(" \t");
  return first == std::string::npos ? std::string() : s.substr(first);
}

std::string utc_now() {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(text, &len);
  return trim(std::string(text, static_cast<std::size_t>(len)).c_str());
}

// OMPI_MCA_* and UCX_* variables: how MPI was tuned (OpenMPI reports no API for its pml choice).
std::string mpi_environment() {
  std::string out;
  for (char** e = environ; *e; ++e) {
    const std::string var = *e;
    if (var.rfind("OMPI_MCA_", 0) == 0 || var.rfind("UCX_", 0) == 0) out += (out.empty() ? "" : "\n") + var;
  }
  return out;
}

std::string first_value(const std::string& file, const std::string& key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return trim(line.substr(colon + 1));
    }
  return "";
}

std::string machine_description() {
  const std::string cpu = first_value("/proc/cpuinfo", "model name");
  const std::string memory = first_value("/proc/meminfo", "MemTotal");
  return (cpu.empty() ? std::string("unknown CPU") : cpu) + ", " + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) +
         " logical cores, " + (memory.empty() ? std::string("unknown") : memory) + " memory";
}

std::string gpu_description() {
  std::string out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) {
    const std::string model = first_value((entry.path() / "information").string(), "Model");
    out += (out.empty() ? "" : ", ") + (model.empty() ? entry.path().filename().string() : model);
  }
  return out.empty() ? "none" : out;
}

std::string broadcast(comm::Communicator& comm, std::string text) {
  std::uint64_t size = text.size();
  comm.bcast(std::span<std::uint64_t>(&size, 1), 0);
  text.resize(size);
  comm.bcast(std::span<char>(text.data(), text.size()), 0);
  return text;
}

// "hostA (2 ranks), hostB (2 ranks)": every rank's host name, gathered to all.
std::string hosts(comm::Communicator& comm) {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::array<char, 256> mine{};
  std::copy(name, name + 255, mine.begin());
  const auto all = comm.allgather(mine);
  std::map<std::string, int> ranks_per_host;
  for (const auto& h : all) ++ranks_per_host[std::string(h.data())];
  std::string out;
  for (const auto& [host, n] : ranks_per_host)
    out += (out.empty() ? "" : ", ") + host + " (" + std::to_string(n) + (n == 1 ? " rank)" : " ranks)");
  return out;
}

}  // namespace

RunMetadata collect_run_metadata(comm::Communicator& comm, const std::string& command_line,
                                 const std::string& config_json) {
  const bool root = comm.rank() == 0;
  RunMetadata m;
  auto& a = m.attributes;
  a["schema_version"] = kReportSchemaVersion;
  a["embscale_version"] = std::string(EMBSCALE_VERSION);
  a["git_sha"] = std::string(EMBSCALE_GIT_SHA);
  a["created_utc"] = broadcast(comm, root ? utc_now() : "");
  a["command_line"] = broadcast(comm, root ? command_line : "");
  a["config_json"] = broadcast(comm, root ? config_json : "");
  a["mpi_library_version"] = broadcast(comm, root ? mpi_library_version() : "");
  a["mpi_environment"] = broadcast(comm, root ? mpi_environment() : "");
  a["ranks"] = std::int64_t{comm.size()};
  a["hosts"] = hosts(comm);
  a["machine"] = broadcast(comm, root ? machine_description() : "");
  a["gpu"] = broadcast(comm, root ? gpu_description() : "");
  const char* job = root ? std::getenv("SLURM_JOB_ID") : nullptr;
  a["slurm_job_id"] = broadcast(comm, job ? job : "");
  // CUDA and NCCL versions are recorded by runs that load kernels/; this run is CPU only.
  a["cuda_version"] = std::string("not used");
  a["nccl_version"] = std::string("not used");
  return m;
}

}  // namespace embscale::report
