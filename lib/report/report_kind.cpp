#include "report/report_kind.hpp"

#include <variant>

#include "core/error.hpp"

namespace embscale::report {

std::string report_kind(const std::map<std::string, SummaryValue>& root_attributes) {
  const auto it = root_attributes.find(std::string(kReportKindAttribute));
  if (it == root_attributes.end()) return std::string(kRunReport);
  if (const auto* kind = std::get_if<std::string>(&it->second)) return *kind;
  throw InputError("/: expected the attribute " + std::string(kReportKindAttribute) + " to be text (\"" +
                   std::string(kRunReport) + "\", \"" + std::string(kCollectivesReport) + "\")");
}

std::string require_one_kind(const std::vector<FileKind>& files, std::string_view action) {
  if (files.empty()) return std::string(kRunReport);
  bool one_kind = true;
  for (const auto& f : files) one_kind = one_kind && f.kind == files.front().kind;
  if (one_kind) return files.front().kind;
  std::string listed;
  for (std::size_t i = 0; i < files.size(); ++i)
    listed += (i == 0 ? "" : ", ") + files[i].file + (i == 0 ? " is a " : " a ") + files[i].kind + " report";
  throw InputError("cannot " + std::string(action) + " reports of different kinds (root attribute " +
                   std::string(kReportKindAttribute) + "): " + listed);
}

void require_kind(const FileKind& file, std::string_view expected, std::string_view reader) {
  if (file.kind == expected) return;
  throw InputError(file.file + ": a " + file.kind + " report (root attribute " + std::string(kReportKindAttribute) +
                   "); " + std::string(reader) + " reads " + std::string(expected) + " reports only");
}

}  // namespace embscale::report
