#include "report/gbench_json.hpp"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "report/report_kind.hpp"

namespace embscale::report {
namespace {

double seconds_per_unit(const std::string& unit, const std::filesystem::path& path) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1.0;
  throw InputError(path.string() + ": benchmarks[].time_unit: expected \"ns\", \"us\", \"ms\" or \"s\", got \"" + unit +
                   "\"");
}

}  // namespace

ReportData read_google_benchmark_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open Google Benchmark JSON file");
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path.string() + ": invalid JSON: " + e.what());
  }
  if (!json.is_object() || !json.contains("benchmarks") || !json["benchmarks"].is_array())
    throw InputError(path.string() + ": expected Google Benchmark JSON with a \"benchmarks\" array");
  ReportData data;
  data.attributes["source"] = std::string("google benchmark json");
  data.attributes[std::string(kReportKindAttribute)] = std::string("google_benchmark");
  std::size_t index = 0;
  for (const auto& b : json["benchmarks"]) {
    if (!b.is_object() || !b.contains("name") || !b.contains("real_time")) continue;
    if (b.value("run_type", std::string("iteration")) != "iteration") continue;  // aggregates
    const double unit = seconds_per_unit(b.value("time_unit", std::string("ns")), path);
    ReportData::Run run;
    run.id = "gbench" + std::to_string(index++);
    run.parameters = {{"benchmark", b.value("run_name", b["name"].get<std::string>())}};
    run.series["real_time"] = {b["real_time"].get<double>() * unit};
    if (b.contains("cpu_time")) run.series["cpu_time"] = {b["cpu_time"].get<double>() * unit};
    data.runs.push_back(std::move(run));
  }
  return data;
}

ReportData read_comparable(const std::filesystem::path& path) {
  return path.extension() == ".json" ? read_google_benchmark_json(path) : read_report(path);
}

}  // namespace embscale::report
