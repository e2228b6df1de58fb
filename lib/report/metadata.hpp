// Run metadata: the root attributes of a report (results/schema.md). What makes a figure
// interpretable later: which code, which MPI and how it was tuned, which machines, which job.
#pragma once

#include <map>
#include <string>

#include "comm/communicator.hpp"
#include "report/summary.hpp"

namespace embscale::report {

inline constexpr std::int64_t kReportSchemaVersion = 1;

struct RunMetadata {
  std::map<std::string, SummaryValue> attributes;
};

// Collective: every rank gets identical attributes (taken on rank 0, host names from all).
RunMetadata collect_run_metadata(comm::Communicator& comm, const std::string& command_line,
                                 const std::string& config_json);

}  // namespace embscale::report
