#include <iostream>
#include <variant>

#include "bench/cli/commands.hpp"
#include "report/reader.hpp"
#include "report/summary.hpp"

namespace embscale::cli {
namespace {

std::string attribute_text(const report::ReportData& data, const std::string& name) {
  const auto it = data.attributes.find(name);
  if (it == data.attributes.end()) return "-";
  return std::visit([](const auto& v) {
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) return v;
    else return std::to_string(v);
  }, it->second);
}

}  // namespace

int report_command(const std::string& report_path) {
  const auto data = report::read_report(report_path);
  std::cout << report_path << "\n";
  for (const char* name : {"embscale_version", "git_sha", "created_utc", "ranks", "hosts", "slurm_job_id"})
    std::cout << "  " << name << ": " << attribute_text(data, name) << '\n';
  std::cout << "  runs: " << data.runs.size() << "\n\n" << report::format_summary_table(data.summary);
  return 0;
}

}  // namespace embscale::cli
