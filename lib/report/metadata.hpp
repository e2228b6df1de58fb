// Run metadata: the root attributes of a report (results/schema.md, "Root attributes"). What
// makes a figure interpretable later: which code, which MPI and how it was tuned, which
// machines, which job.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "comm/communicator.hpp"
#include "report/report_kind.hpp"
#include "report/summary.hpp"

namespace embscale::report {

// The version of results/schema.md that this code writes and reads. Bump it with every change
// a reader of an older version would misread, and say what changed in the schema's history.
inline constexpr std::int64_t kReportSchemaVersion = 1;

struct RunMetadata {
  // Attribute name -> value; integers stay int64 attributes (schema_version, ranks), text is
  // stored as fixed-length strings. Every rank must hold identical attributes (the writer checks).
  std::map<std::string, SummaryValue> attributes;
};

// Collective over `comm`: every rank returns identical attributes. Host names come from every
// rank; everything else (the clock, the environment, the machine, the given command line and
// config) is taken on rank 0 and broadcast, so the arguments matter on rank 0 only. `kind` is the
// root attribute report_kind (report/report_kind.hpp): every program that writes a report names
// its kind, kRunReport for `run` and `sweep` (the default), kCollectivesReport for `collectives`.
RunMetadata collect_run_metadata(comm::Communicator& comm, const std::string& command_line,
                                 const std::string& config_json, std::string_view kind = kRunReport);

}  // namespace embscale::report
