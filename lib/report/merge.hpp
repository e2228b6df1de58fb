// Merging reports into one (the last step of a sweep, and `embscale merge` for runs launched
// separately, such as the srun steps of a scaling study). Serial: no MPI needed.
//
// The merged file has the given root attributes; every run of every input, copied whole (HDF5's
// object copy: datasets keep their chunks and compression, attributes their order), with the
// input's root attributes added as /runs/<id>/metadata (what that run's own file said about its
// config, job, hosts and time); and /summary with the inputs' rows in input order.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "report/summary.hpp"

namespace embscale::report {

// Writes `output` atomically (temporary name, then rename), with the inputs' report_kind (which
// `attributes` may repeat but not contradict). Throws InputError naming the file when an input
// cannot be read as a report, when the inputs are of different kinds (naming each file and its
// kind), when two inputs hold a run of the same id (naming both files and how to name runs apart:
// `embscale run --id`), when an input's /summary columns differ from the first input's, or when
// `output` cannot be created. `output` is never one of the inputs.
void merge_reports(const std::vector<std::filesystem::path>& inputs, const std::filesystem::path& output,
                   const std::map<std::string, SummaryValue>& attributes);

}  // namespace embscale::report
