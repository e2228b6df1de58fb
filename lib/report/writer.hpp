// ReportWriter: one HDF5 report, written collectively by all ranks of a communicator with
// parallel HDF5 (MPI-IO), under a temporary name that commit() renames (results/schema.md is the
// layout).
//
// Invariants the design rests on:
// * Every HDF5 call that changes metadata (create a group, dataset or attribute) is collective
//   and needs identical arguments on all ranks. So every public call first agrees on what will
//   be created: a digest of the names, shapes and attribute values goes through one allreduce,
//   and when ranks differ all of them throw embscale::Error before any HDF5 call: none hangs.
// * Per-rank arrays are [iteration, rank] datasets: each rank writes its own column, all in one
//   collective write (compressed chunks need that). Rank-identical data (series, tables, /summary) is
//   written by rank 0 in a collective write in which the other ranks select nothing.
// * The file appears under its final name only whole: "<dir>/.<name>.tmp.<host>.<pid>" of rank 0
//   until commit(). The temporary path is registered (core/temp_files.hpp) on every rank, so
//   whichever rank fails alone and aborts the job removes it first. A job killed outright
//   (SIGKILL of a rank: the launcher then kills the rest) removes nothing; the next writer into
//   the same directory removes such orphans (core/temp_files.hpp's remove_stale_temp_files) when
//   rank 0 runs on the host that wrote them.
// * A full disk fails one call on every rank, never inside HDF5's collective close (where the
//   failed rank leaves the others waiting forever): the space a write or the close needs is
//   claimed first on rank 0 (report/disk_space.hpp: blocks reserved after the file's end) and
//   the verdict shared; claim_space() claims a whole run's before it starts.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "report/hdf5_handles.hpp"
#include "report/metadata.hpp"
#include "report/summary.hpp"
#include "report/table.hpp"

namespace embscale::report {

struct RunRecord {
  std::string id;                                             // group name under /runs (no '/')
  std::vector<SummaryField> parameters;                       // attributes of /runs/<id>
  std::vector<std::string> phase_names;                       // execution order ("phases")
  std::vector<std::string> phase_meanings;                    // empty, or one per phase ("phase_meanings")
  std::map<std::string, std::vector<double>> timings;         // this rank: phase -> [iteration] s
  std::map<std::string, std::vector<std::int64_t>> counters;  // this rank: name -> [iteration]
  std::map<std::string, std::vector<double>> series;          // global, identical on all ranks
  // Global, identical on all ranks: "<group>/<name>" -> /runs/<id>/<group>/<name>, a float64
  // [row, column] dataset. Two non-empty parts; the group is none of is_reserved_run_group's.
  std::map<std::string, ReportTable> tables;
  // In a sweep: the point's index and the repetition, written as the structural attributes
  // `point` and `repetition` (not parameters: repetitions of a point share their parameters).
  std::optional<std::int64_t> point;
  std::optional<std::int64_t> repetition;
  // The sharding plan the run used (lib/plan's plan_json), written as the structural attribute
  // `sharding_plan` when not empty: a run of "sharding": "auto" layers, or of a config with a
  // "planner" section.
  std::string sharding_plan;
  // What carried a parameter-server run's protocol messages (MessageChannel::transport_details:
  // "mpi", or "ucx: <UCP's lanes>"), rank 0's, written as the structural attribute `transport_details`
  // when not empty.
  std::string transport;
  // A simulation's (`embscale simulate`): one process writes every rank's columns for this many
  // (virtual) ranks, each timings/counters vector holding [iteration][rank] row-major. 0: a run,
  // each rank writing its own column.
  int simulated_ranks = 0;
};
// Every rank passes the same id, parameters, phase names, dataset names, series lengths, table
// names, columns, meanings and row counts (rank 0 alone writes series and table values).
// A per-rank column is either as long as on the other ranks or empty: a rank that recorded
// nothing for a dataset (a parameter-server rank for a trainer phase) writes zeros there.

class ReportWriter {
 public:
  // Collective. Creates the temporary file and writes `metadata` as root attributes. Throws
  // InputError("<final_path>: cannot create report: <reason>") on every rank when no file can
  // be created there (decided on rank 0 by creating one, before any collective HDF5 call),
  // Error on every rank when the ranks' metadata differ. Rank 0 first removes the orphaned
  // temporary files of earlier writers of `final_path`.
  ReportWriter(comm::Communicator& comm, std::filesystem::path final_path, const RunMetadata& metadata);
  // Without commit(): closes (collectively, unless an exception is unwinding: then the handles
  // are abandoned, since other ranks may never close them) and removes the temporary file.
  // Never throws.
  ~ReportWriter();
  ReportWriter(const ReportWriter&) = delete;
  ReportWriter& operator=(const ReportWriter&) = delete;

  // Collective: claims about `bytes` of disk for what the caller will write (report/
  // disk_space.hpp's expected_report_bytes: a run's, before its first step). Throws InputError
  // on every rank when the filesystem lacks them: "<final_path>: the filesystem holding it has
  // <free> bytes free; the report needs about <bytes> ...". The claim holds the blocks until the
  // writes that need them.
  void claim_space(std::uint64_t bytes);
  // Collective: /runs/<id>. Its bytes are claimed first: a full disk is an Error on every rank
  // naming ENOSPC (the temporary file removed by the destructor), before any collective write.
  void write_run(const RunRecord& run);
  void write_summary(const std::vector<SummaryRow>& rows);  // collective: /summary, once
  // Collective: closes the file, rank 0 renames it to final_path(); every rank returns once
  // the report exists under its final name (or throws on every rank when the rename failed).
  // The close's metadata writes are claimed first (an Error on every rank naming ENOSPC when
  // the disk lacks them).
  void commit();

  const std::filesystem::path& final_path() const noexcept { return final_path_; }
  const std::filesystem::path& temp_path() const noexcept { return temp_path_; }

 private:
  // Throws Error(what + ...) on every rank unless `digest` is the same on all ranks.
  void agree(std::uint64_t digest, const std::string& what);
  void remove_temp_file() noexcept;
  // Rank 0 reserves `bytes` after the temporary file's end; the verdict on every rank. No room:
  // `refusal` (InputError: a claim before a run) or an Error naming ENOSPC and `what`.
  void reserve(std::uint64_t bytes, const std::string& what, bool refusal);

  comm::Communicator& comm_;
  std::filesystem::path final_path_;
  std::filesystem::path temp_path_;
  File file_;
  Group runs_;
  PropertyList collective_;  // dataset transfer: H5FD_MPIO_COLLECTIVE
  bool committed_ = false;
  bool wrote_summary_ = false;
  bool out_of_space_ = false;  // a claim failed: the destructor abandons the handles
};

}  // namespace embscale::report
