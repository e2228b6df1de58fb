// The kind of a report (results/schema.md, root attribute report_kind): which program wrote it,
// and so what its runs hold. A collectives report's runs have a step_time series and bytes
// counters as a training run's do, so a tool that reads one kind only must refuse the others by
// name rather than misread them.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "report/summary.hpp"

namespace embscale::report {

inline constexpr std::string_view kReportKindAttribute = "report_kind";
inline constexpr std::string_view kRunReport = "run";                  // embscale run, sweep, their merges
inline constexpr std::string_view kCollectivesReport = "collectives";  // embscale collectives

// The kind the root attributes name: "run" when they name none (every report written before the
// attribute existed was a run report). Throws InputError when the attribute is not text.
std::string report_kind(const std::map<std::string, SummaryValue>& root_attributes);

struct FileKind {
  std::string file;
  std::string kind;
};

// Returns the one kind of all `files` (kRunReport for none). Throws InputError when they differ,
// naming every file with its kind: "cannot merge reports of different kinds (root attribute
// report_kind): a.h5 is a run report, b.h5 a collectives report". `action` is the verb ("merge").
std::string require_one_kind(const std::vector<FileKind>& files, std::string_view action);

// Throws InputError "<file>: a collectives report (root attribute report_kind); <reader> reads
// run reports only" unless `kind` is `expected`.
void require_kind(const FileKind& file, std::string_view expected, std::string_view reader);

}  // namespace embscale::report
