#include "report/writer.hpp"

#include <mpi.h>

#include <algorithm>
#include <exception>

#include "core/error.hpp"
#include "core/temp_files.hpp"
#include "report/collective.hpp"
#include "report/disk_space.hpp"
#include "report/layout.hpp"

namespace embscale::report {
namespace {

// Claimed beyond a run's data for its groups and attributes, and beyond the metadata cache's
// size for a close (the superblock, the free-space and B-tree bookkeeping HDF5 writes then).
constexpr std::uint64_t kRunMetadataBytes = 64 * 1024;
constexpr std::uint64_t kCloseMarginBytes = 64 * 1024;

// Why `name` cannot name a group, dataset or attribute, or "".
std::string bad_name(const std::string& name, const std::string& what) {
  if (name.empty()) return what + " has an empty name";
  if (name == "." || name.find('/') != std::string::npos) return what + " \"" + name + "\" contains '/' or is \".\"";
  return "";
}

// Why `table` cannot be written as "<group>/<name>" = `key`, or "".
std::string table_problem(const std::string& key, const ReportTable& table) {
  const auto slash = key.find('/');
  const bool two_parts = slash != std::string::npos && slash != 0 && slash + 1 != key.size() &&
                         key.find('/', slash + 1) == std::string::npos;
  if (!two_parts) return "table \"" + key + "\" is not named <group>/<name> (two non-empty parts)";
  const std::string group = key.substr(0, slash);
  if (std::string p = bad_name(group, "table group"); !p.empty()) return p;
  if (std::string p = bad_name(key.substr(slash + 1), "table"); !p.empty()) return p;
  if (is_reserved_run_group(group))
    return "table " + key + ": the group " + group +
           " is reserved (timings, counters, series, metadata, "
           "timings_summary and counters_summary hold no tables)";
  if (table.columns.empty()) return "table " + key + " has no columns";
  for (const auto& column : table.columns)
    if (column.empty() || column.find(',') != std::string::npos)
      return "table " + key + ": column name \"" + column + "\" is empty or contains ','";
  if (table.values.size() % table.columns.size() != 0)
    return "table " + key + ": " + std::to_string(table.values.size()) + " values do not fill rows of " +
           std::to_string(table.columns.size()) + " columns";
  if (table.meaning.find('\n') != std::string::npos) return "table " + key + ": the meaning is more than one line";
  return "";
}

// A per-rank dataset of a run: "timings/<phase>" or "counters/<name>", and this rank's length.
struct PerRankColumn {
  std::string name;
  std::uint64_t length = 0;
};

// Adds what write_run will create to `digest` (names, parameter values, series lengths: what
// must be identical on all ranks), lists the per-rank columns, and returns what is wrong, or "".
std::string describe_run(const RunRecord& run, Digest& digest, std::vector<PerRankColumn>& columns) {
  std::string problem = bad_name(run.id, "run id");
  const auto note = [&](const std::string& p) {
    if (problem.empty()) problem = p;
  };
  digest.add(run.id).add(std::uint64_t{run.parameters.size()});
  for (const auto& p : run.parameters) {
    digest.add(p.name).add_value(p.value);
    note(bad_name(p.name, "parameter"));
    if (is_structural_attribute(p.name)) note("parameter name \"" + p.name + "\" is reserved");
  }
  digest.add(static_cast<std::uint64_t>(run.point.value_or(-1)))
      .add(static_cast<std::uint64_t>(run.repetition.value_or(-1)));
  digest.add(join_names(run.phase_names));
  digest.add(join_names(run.phase_meanings));
  digest.add(run.sharding_plan);  // planned identically on every rank
  digest.add(run.transport);      // rank 0's, broadcast
  for (const auto& phase : run.phase_names)
    if (phase.find(',') != std::string::npos) note("phase name \"" + phase + "\" contains ','");
  // A simulation's vectors hold every rank's column: its length is per rank.
  const std::size_t ranks_per_vector = run.simulated_ranks > 0 ? static_cast<std::size_t>(run.simulated_ranks) : 1;
  digest.add(std::uint64_t{ranks_per_vector});
  const auto length = [&](const std::string& name, std::size_t size) {
    if (size % ranks_per_vector != 0)
      note(name + " holds " + std::to_string(size) + " values, not a whole number of iterations of " +
           std::to_string(ranks_per_vector) + " simulated ranks");
    return size / ranks_per_vector;
  };
  for (const auto& [name, column] : run.timings) {
    digest.add("timings").add(name);
    note(bad_name(name, "phase"));
    columns.push_back({"timings/" + name, length("timings/" + name, column.size())});
  }
  for (const auto& [name, column] : run.counters) {
    digest.add("counters").add(name);
    note(bad_name(name, "counter"));
    columns.push_back({"counters/" + name, length("counters/" + name, column.size())});
  }
  for (const auto& [name, values] : run.series) {
    digest.add("series").add(name).add(std::uint64_t{values.size()});
    note(bad_name(name, "series"));
  }
  for (const auto& [key, table] : run.tables) {
    digest.add("tables").add(key).add(std::uint64_t{table.columns.size()});
    for (const auto& column : table.columns) digest.add(column);
    digest.add(std::uint64_t{table.values.size()}).add(table.meaning);
    note(table_problem(key, table));
  }
  digest.add(problem);
  return problem;
}

template <class T> hid_t native_type() {
  if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
  else return H5T_NATIVE_INT64;
}

// [iterations, ranks]: this rank writes column `rank` (zeros when it recorded nothing) in one
// collective write with every other rank.
template <class T>
void write_column(hid_t group, const std::string& name, const std::vector<T>& column, hsize_t iterations, int rank,
                  int ranks, hid_t collective) {
  const std::string where = object_name(group) + "/" + name;
  const hsize_t columns = static_cast<hsize_t>(ranks);
  Dataset dataset = create_dataset(group, name, native_type<T>(), {iterations, columns}, where);
  if (iterations == 0) return;  // every rank agrees: nothing to write
  Dataspace file_space(H5Dget_space(dataset), "dataspace of " + where);
  const hsize_t start[2] = {0, static_cast<hsize_t>(rank)};
  const hsize_t count[2] = {iterations, 1};
  check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr), "select column of " + where);
  const Dataspace memory = simple_space({iterations}, "memory dataspace of " + where);
  const std::vector<T> zeros(column.empty() ? iterations : 0);
  const T* data = column.empty() ? zeros.data() : column.data();
  check(H5Dwrite(dataset, native_type<T>(), memory, file_space, collective, data), "write " + where);
}

// [iterations, ranks] from one process: `values` holds every rank's column, [iteration][rank].
template <class T>
void write_all_columns(hid_t group, const std::string& name, const std::vector<T>& values, hsize_t iterations,
                       int ranks, hid_t collective) {
  const std::string where = object_name(group) + "/" + name;
  Dataset dataset = create_dataset(group, name, native_type<T>(), {iterations, static_cast<hsize_t>(ranks)}, where);
  if (iterations == 0) return;
  check(H5Dwrite(dataset, native_type<T>(), H5S_ALL, H5S_ALL, collective, values.data()), "write " + where);
}

// A series [n] or a table [rows, columns] (`dims`, holding values.size() elements): identical on
// all ranks, so rank 0 writes it and the others select nothing.
Dataset write_from_root(hid_t group, const std::string& name, const std::vector<double>& values,
                        std::initializer_list<hsize_t> dims, bool root, hid_t collective) {
  const std::string where = object_name(group) + "/" + name;
  Dataset dataset = create_dataset(group, name, H5T_NATIVE_DOUBLE, dims, where);
  if (values.empty()) return dataset;  // every rank agrees: nothing to write
  Dataspace file_space(H5Dget_space(dataset), "dataspace of " + where);
  const Dataspace memory = simple_space({values.size()}, "memory dataspace of " + where);
  if (!root) {
    check(H5Sselect_none(file_space), "select none of " + where);
    check(H5Sselect_none(memory), "select none of " + where);
  }
  check(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, memory, file_space, collective, values.data()), "write " + where);
  return dataset;
}

// The tables of a run under `run_group` (`where`), a group per key prefix: std::map keeps the
// keys of one group adjacent (they share the prefix "<group>/"), so each group is created once.
void write_tables(hid_t run_group, const std::string& where, const std::map<std::string, ReportTable>& tables,
                  bool root, hid_t collective) {
  std::string open_name;
  Group open;
  for (const auto& [key, table] : tables) {
    const auto slash = key.find('/');
    const std::string group_name = key.substr(0, slash);
    const std::string name = key.substr(slash + 1);
    if (!open.valid() || group_name != open_name) {
      open = create_group(run_group, group_name, where + "/" + group_name);
      open_name = group_name;
    }
    const Dataset dataset =
        write_from_root(open, name, table.values, {table.rows(), table.columns.size()}, root, collective);
    const std::string dataset_where = where + "/" + key;
    write_attribute(dataset, "columns", join_names(table.columns), dataset_where);
    if (!table.meaning.empty()) write_attribute(dataset, "meaning", table.meaning, dataset_where);
  }
}

}  // namespace

ReportWriter::ReportWriter(comm::Communicator& comm, std::filesystem::path final_path, const RunMetadata& metadata)
    : comm_(comm), final_path_(std::move(final_path)) {
  silence_hdf5_errors();
  const auto handle = comm.native_handle();
  EMBSCALE_EXPECTS(handle.kind == "mpi" && handle.handle, "the HDF5 report needs an MPI communicator");
  const MPI_Comm mpi_comm = *static_cast<const MPI_Comm*>(handle.handle);

  // Rank 0 checks the directory and names the temporary file; every rank learns the verdict
  // before the collective create, so a bad path fails everywhere instead of hanging somewhere.
  // Rank 0 also removes the orphans of earlier writers of this name (killed outright: they
  // could not remove their own temporary files).
  comm::all_or_none(comm, [&] {
    if (comm.rank() != 0) return;
    check_file_can_be_created(final_path_, "report");
    remove_stale_temp_files(final_path_);
  });
  temp_path_ = comm::broadcast_strings(comm, {comm.rank() == 0 ? temporary_path_for(final_path_).string() : ""})[0];

  Digest digest;
  for (const auto& [name, value] : metadata.attributes) digest.add(name).add_value(value);
  if (!same_on_all_ranks(comm, digest.value()))
    throw Error(final_path_.string() +
                ": report metadata differs between ranks (collect it with "
                "collect_run_metadata, which is collective)");

  register_temp_file(temp_path_);
  try {
    PropertyList access = property_list(H5P_FILE_ACCESS, "file access properties");
    check(H5Pset_fapl_mpio(access, mpi_comm, MPI_INFO_NULL), "H5Pset_fapl_mpio");
    // Metadata is identical on all ranks: let HDF5 read it once and write it collectively
    // instead of from every rank (what keeps metadata I/O flat at thousands of ranks).
    check(H5Pset_all_coll_metadata_ops(access, true), "H5Pset_all_coll_metadata_ops");
    check(H5Pset_coll_metadata_write(access, true), "H5Pset_coll_metadata_write");
    // The 1.8 file format: attributes over 64 KiB (a large config_json) and creation order.
    check(H5Pset_libver_bounds(access, H5F_LIBVER_V18, H5F_LIBVER_V18), "H5Pset_libver_bounds");
    file_ = File(H5Fcreate(temp_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access), "create " + temp_path_.string());
    collective_ = property_list(H5P_DATASET_XFER, "transfer properties");
    check(H5Pset_dxpl_mpio(collective_, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
    for (const auto& [name, value] : metadata.attributes) write_attribute(file_, name, value, "/");
    runs_ = create_group(file_, "runs", "/runs");
  } catch (...) {
    // Failures here are uniform (same arguments on every rank after the agreement above), so
    // closing collectively is safe.
    runs_.close();
    collective_.close();
    file_.close();
    remove_temp_file();
    throw;
  }
}

ReportWriter::~ReportWriter() {
  if (committed_) return;
  if (std::uncaught_exceptions() > 0 || out_of_space_) {
    // An error is unwinding that other ranks may not share, or the disk is full: a collective
    // close could wait forever for them (or fail on some ranks only), so the identifiers are
    // abandoned (the job is about to end).
    runs_.release();
    file_.release();
  }
  runs_.close();
  collective_.close();
  file_.close();
  remove_temp_file();
}

void ReportWriter::remove_temp_file() noexcept {
  // Every rank removes (a second removal finds nothing): on the unwinding path this rank may be
  // the only one that gets here before the job ends.
  std::error_code ignored;
  std::filesystem::remove(temp_path_, ignored);
  unregister_temp_file(temp_path_);
}

void ReportWriter::reserve(std::uint64_t bytes, const std::string& what, bool refusal) {
  // A refused claim leaves the file as it was; a failed one leaves a file no collective close
  // may touch (the disk is full: HDF5's close would fail on some ranks only).
  if (!refusal) out_of_space_ = true;
  try {
    comm::all_or_none(comm_, [&] {
      if (comm_.rank() != 0) return;
      const Reservation reserved = reserve_after_end(temp_path_, bytes);
      // Without fallocate the free space is all there is to check.
      if (reserved == Reservation::kReserved ||
          (reserved == Reservation::kUnsupported && free_bytes(temp_path_.parent_path()) >= bytes))
        return;
      const std::string free = std::to_string(free_bytes(temp_path_.parent_path()));
      if (refusal)
        throw InputError(final_path_.string() + ": the filesystem holding it has " + free + " bytes free; " + what +
                         " needs about " + std::to_string(bytes) +
                         ". Free space there, or write the report elsewhere (-o)");
      throw Error(final_path_.string() + ": no space left on the device (ENOSPC) for " + what + ": " +
                  std::to_string(bytes) + " bytes needed, " + free + " free");
    });
  } catch (...) {
    // Agreed on every rank. A refusal: nothing failed in HDF5, so the file closes collectively.
    // No space: the handles stay for the destructor to abandon, since HDF5's collective close
    // would fail on a full disk on some ranks only. embscale then ends every rank through
    // MPI_Abort (the CLI's path for an Error), so the abandoned file is never closed; a program
    // that goes on to MPI_Finalize instead may see HDF5 fail closing it at exit.
    if (refusal) {
      runs_.close();
      collective_.close();
      file_.close();
      remove_temp_file();
    }
    throw;
  }
  out_of_space_ = false;
}

void ReportWriter::claim_space(std::uint64_t bytes) {
  EMBSCALE_EXPECTS(file_.valid() && !committed_, "claim_space on a committed or failed ReportWriter");
  reserve(bytes, "the report", true);
}

void ReportWriter::agree(std::uint64_t digest, const std::string& what) {
  if (!same_on_all_ranks(comm_, digest))
    throw Error(final_path_.string() + ": " + what +
                " differs between ranks; every HDF5 metadata call is "
                "collective, so every rank must pass the same names, sizes and attribute values");
}

void ReportWriter::write_run(const RunRecord& run) {
  EMBSCALE_EXPECTS(file_.valid() && !committed_, "write_run on a committed or failed ReportWriter");
  EMBSCALE_EXPECTS(run.simulated_ranks == 0 || comm_.size() == 1, "a simulation's report is written by one process");
  Digest digest;
  std::vector<PerRankColumn> columns;
  const std::string problem = describe_run(run, digest, columns);
  agree(digest.value(), "run " + run.id);
  // The digest covers the problem too: every rank throws here, or none.
  if (!problem.empty()) throw Error(final_path_.string() + ": run " + run.id + ": " + problem);

  // Column lengths: each rank's is the common length or 0. One reduction gives the longest
  // (first half) and, through ~length of the non-empty ones, the shortest non-empty.
  const std::size_t n = columns.size();
  std::vector<std::uint64_t> mine(2 * n), all(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    mine[i] = columns[i].length;
    mine[n + i] = columns[i].length == 0 ? 0 : ~columns[i].length;
  }
  comm_.allreduce(std::span<const std::uint64_t>(mine), std::span<std::uint64_t>(all), comm::ReduceOp::kMax);
  for (std::size_t i = 0; i < n; ++i)
    if (all[n + i] != 0 && ~all[n + i] != all[i])
      throw Error(final_path_.string() + ": run " + run.id + ": " + columns[i].name + " has " +
                  std::to_string(~all[n + i]) + " iterations on one rank and " + std::to_string(all[i]) +
                  " on another (a rank records every iteration or none)");

  // The run's bytes: its per-rank columns (8 bytes per iteration and rank), series and tables,
  // and its metadata.
  std::uint64_t bytes = kRunMetadataBytes;
  const auto ranks = static_cast<std::uint64_t>(std::max(comm_.size(), run.simulated_ranks));
  for (std::size_t c = 0; c < n; ++c) bytes += all[c] * ranks * sizeof(double);
  for (const auto& [name, values] : run.series) bytes += values.size() * sizeof(double);
  for (const auto& [name, table] : run.tables) bytes += table.values.size() * sizeof(double);
  reserve(bytes, "run " + run.id, false);

  Group group = create_group(runs_, run.id, "/runs/" + run.id);
  for (const auto& p : run.parameters) write_attribute(group, p.name, p.value, "/runs/" + run.id);
  write_attribute(group, "phases", join_names(run.phase_names), "/runs/" + run.id);
  if (!run.phase_meanings.empty())
    write_attribute(group, "phase_meanings", phase_meanings_text(run.phase_names, run.phase_meanings),
                    "/runs/" + run.id);
  write_attribute(group, "samples", std::string("raw"), "/runs/" + run.id);  // no cap applied yet
  if (run.point) write_attribute(group, "point", *run.point, "/runs/" + run.id);
  if (run.repetition) write_attribute(group, "repetition", *run.repetition, "/runs/" + run.id);
  if (!run.sharding_plan.empty()) write_attribute(group, "sharding_plan", run.sharding_plan, "/runs/" + run.id);
  if (!run.transport.empty()) write_attribute(group, "transport_details", run.transport, "/runs/" + run.id);
  std::size_t i = 0;
  // A run: each rank its column. A simulation: its one process every column.
  const auto write_per_rank = [&](hid_t where, const std::string& name, const auto& values) {
    if (run.simulated_ranks > 0) write_all_columns(where, name, values, all[i++], run.simulated_ranks, collective_);
    else write_column(where, name, values, all[i++], comm_.rank(), comm_.size(), collective_);
  };
  Group timings = create_group(group, "timings", "/runs/" + run.id + "/timings");
  for (const auto& [name, column] : run.timings) write_per_rank(timings, name, column);
  Group counters = create_group(group, "counters", "/runs/" + run.id + "/counters");
  for (const auto& [name, column] : run.counters) write_per_rank(counters, name, column);
  Group series = create_group(group, "series", "/runs/" + run.id + "/series");
  for (const auto& [name, values] : run.series)
    write_from_root(series, name, values, {values.size()}, comm_.rank() == 0, collective_);
  write_tables(group, "/runs/" + run.id, run.tables, comm_.rank() == 0, collective_);
}

void ReportWriter::write_summary(const std::vector<SummaryRow>& rows) {
  EMBSCALE_EXPECTS(file_.valid() && !committed_, "write_summary on a committed or failed ReportWriter");
  EMBSCALE_EXPECTS(!wrote_summary_, "write_summary called twice");
  const SummaryTable table(rows);
  agree(table.digest(), "the summary table");
  if (!table.problem().empty()) throw Error(final_path_.string() + ": summary: " + table.problem());
  wrote_summary_ = true;
  if (rows.empty()) return;
  table.write(file_, "summary", comm_.rank() == 0, collective_);
}

void ReportWriter::commit() {
  EMBSCALE_EXPECTS(file_.valid() && !committed_, "commit on a committed or failed ReportWriter");
  // Closing the file flushes every rank's data (collective); a failure on one rank fails all.
  // Then rank 0 renames, and every rank returns only once the report exists (or all throw).
  // What the close writes: the metadata cache's dirty entries, at most its current size (the
  // largest over the ranks), and a margin for the superblock and the free-space bookkeeping.
  std::size_t max_size = 0, min_clean = 0, current = 0;
  int entries = 0;
  check(H5Fget_mdc_size(file_, &max_size, &min_clean, &current, &entries), "H5Fget_mdc_size");
  const auto metadata = comm_.allreduce(static_cast<std::uint64_t>(current), comm::ReduceOp::kMax);
  reserve(metadata + kCloseMarginBytes, "closing the report", false);
  comm::all_or_none(comm_, [&] {
    runs_.close_checked("close /runs");
    collective_.close();
    file_.close_checked("close " + temp_path_.string());
  });
  committed_ = true;
  try {
    comm::all_or_none(comm_, [&] {
      if (comm_.rank() == 0) commit_temp_file(temp_path_, final_path_);
    });
    if (comm_.rank() == 0) release_after_end(final_path_);  // what the claims reserved and nothing used
  } catch (...) {
    remove_temp_file();
    throw;
  }
  unregister_temp_file(temp_path_);
}

}  // namespace embscale::report
