#include "sweep/manifest.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/temp_files.hpp"
#include "report/reader.hpp"
#include "report/report_kind.hpp"

namespace embscale::sweep {

std::string digest_text(std::uint64_t digest) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(digest));
  return text;
}

Manifest Manifest::create(std::filesystem::path directory, std::uint64_t sweep_digest, std::int64_t runs_total) {
  Manifest manifest(std::move(directory), sweep_digest, runs_total);
  manifest.write();
  return manifest;
}

Manifest Manifest::load(std::filesystem::path directory, std::uint64_t sweep_digest, std::int64_t runs_total) {
  const auto path = path_in(directory);
  const std::string name = path.string();
  std::ifstream in(path);
  if (!in) throw InputError(name + ": cannot open the sweep manifest");
  std::ostringstream text;
  text << in.rdbuf();
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw InputError(name + ": not a valid manifest (" + e.what() + ")");
  }
  Manifest manifest(std::move(directory), sweep_digest, runs_total);
  try {
    if (json.at("manifest_version").get<int>() != kVersion)
      throw InputError(name + ": manifest version " + json.at("manifest_version").dump() + ", this embscale reads " +
                       std::to_string(kVersion));
    const auto digest = json.at("sweep_digest").get<std::string>();
    const auto total = json.at("runs_total").get<std::int64_t>();
    if (digest != digest_text(sweep_digest) || total != runs_total)
      throw InputError(name + ": written for another sweep (digest " + digest + ", " + std::to_string(total) +
                       " runs; this sweep: " + digest_text(sweep_digest) + ", " + std::to_string(runs_total) +
                       " runs). The sweep file or its base config changed: use another output, or remove " +
                       manifest.directory_.string() + " to start over");
    for (const auto& entry : json.at("done"))
      manifest.done_.push_back({entry.at("run_id").get<std::string>(), entry.at("file").get<std::string>(),
                                entry.at("finished_utc").get<std::string>(),
                                entry.at("slurm_job_id").get<std::string>()});
  } catch (const nlohmann::json::exception& e) {
    throw InputError(name + ": not a valid manifest (" + e.what() + ")");
  }
  // Every listed run must be whole on disk: a manifest that does not match its files would
  // otherwise end in a merged report with runs missing.
  for (const auto& entry : manifest.done_) {
    const auto file = manifest.directory_ / entry.file;
    try {
      const auto report = report::read_report(file);
      report::require_kind({file.string(), report.kind()}, report::kRunReport, "a sweep");
      if (!report.find_run(entry.run_id)) throw InputError(file.string() + ": holds no run " + entry.run_id);
    } catch (const InputError& e) {
      throw InputError(name + ": lists run " + entry.run_id + " as done, but its report does not match: " + e.what());
    }
  }
  return manifest;
}

bool Manifest::is_done(const std::string& run_id) const {
  for (const auto& entry : done_)
    if (entry.run_id == run_id) return true;
  return false;
}

void Manifest::mark_done(ManifestEntry entry) {
  done_.push_back(std::move(entry));
  write();
}

void Manifest::write() const {
  nlohmann::json done = nlohmann::json::array();
  for (const auto& e : done_)
    done.push_back(
        {{"run_id", e.run_id}, {"file", e.file}, {"finished_utc", e.finished_utc}, {"slurm_job_id", e.slurm_job_id}});
  const nlohmann::json json = {{"manifest_version", kVersion},
                               {"sweep_digest", digest_text(digest_)},
                               {"runs_total", runs_total_},
                               {"done", done}};
  const auto path = path_in(directory_);
  const auto temp = temporary_path_for(path);
  {
    std::ofstream out(temp);
    out << json.dump(1) << '\n';
    out.flush();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temp, ignored);
      throw Error(temp.string() + ": cannot write the sweep manifest");
    }
  }
  commit_temp_file(temp, path);
}

}  // namespace embscale::sweep
