// ReportWriter: one HDF5 report per run, written collectively by all ranks with parallel HDF5,
// under a temporary name that is renamed when complete (results/schema.md is the layout).
//
// Every HDF5 metadata call is collective with identical arguments, so every rank passes the same
// run ids, names and sizes (checked); per-rank arrays are written as one column per rank.
// The temporary file is registered on every rank, so a rank that fails alone removes it before
// it aborts the job; a writer destroyed while an exception unwinds releases the file without
// the collective close (other ranks may never get there).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "report/hdf5_handles.hpp"
#include "report/metadata.hpp"
#include "report/summary.hpp"

namespace embscale::report {

struct RunRecord {
  std::string id;                                              // group name under /runs
  std::vector<SummaryField> parameters;                        // attributes of /runs/<id>
  std::vector<std::string> phase_names;                        // execution order (attribute)
  std::map<std::string, std::vector<double>> timings;          // this rank: phase -> [iteration] s
  std::map<std::string, std::vector<std::int64_t>> counters;   // this rank: name -> [iteration]
  std::map<std::string, std::vector<double>> series;           // identical on all ranks
};

class ReportWriter {
 public:
  // Collective. Throws InputError (on every rank) when the report cannot be created there.
  ReportWriter(comm::Communicator& comm, std::filesystem::path final_path, const RunMetadata& metadata);
  ~ReportWriter();
  ReportWriter(const ReportWriter&) = delete;
  ReportWriter& operator=(const ReportWriter&) = delete;

  void write_run(const RunRecord& run);                     // collective
  void write_summary(const std::vector<SummaryRow>& rows);  // collective; rows identical on all ranks
  void commit();                                            // collective: close, rename, done

  const std::filesystem::path& final_path() const noexcept { return final_path_; }

 private:
  void check_same_on_all_ranks(const std::string& description);

  comm::Communicator& comm_;
  std::filesystem::path final_path_;
  std::filesystem::path temp_path_;
  Hid file_;
  Hid collective_transfer_;
  bool committed_ = false;
};

}  // namespace embscale::report
