#include "report/writer.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <exception>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/temp_files.hpp"

namespace embscale::report {
namespace {

// Rows of a dataset chunk: large enough for good compression, small enough to bound memory.
constexpr hsize_t kChunkIterations = 4096;
constexpr unsigned kDeflateLevel = 1;  // fast; timings compress mostly through the shuffle-free zlib

std::string broadcast(comm::Communicator& comm, std::string text) {
  std::uint64_t size = text.size();
  comm.bcast(std::span<std::uint64_t>(&size, 1), 0);
  text.resize(size);
  comm.bcast(std::span<char>(text.data(), text.size()), 0);
  return text;
}

// Why `path` cannot be created, or "" when its directory exists and is writable.
std::string cannot_create(const std::filesystem::path& path) {
  const auto dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return "directory " + dir.string() + " does not exist";
  if (::access(dir.c_str(), W_OK) != 0) return "directory " + dir.string() + " is not writable: " + std::strerror(errno);
  if (std::filesystem::is_directory(path, ec)) return "it is a directory";
  return "";
}

void write_attribute(hid_t object, const std::string& name, const SummaryValue& value) {
  Hid space = space_handle(H5Screate(H5S_SCALAR), "H5Screate");
  if (const auto* i = std::get_if<std::int64_t>(&value)) {
    Hid attr = attribute_handle(H5Acreate2(object, name.c_str(), H5T_NATIVE_INT64, space, H5P_DEFAULT, H5P_DEFAULT), "attribute " + name);
    check(H5Awrite(attr, H5T_NATIVE_INT64, i), "attribute " + name);
  } else if (const auto* d = std::get_if<double>(&value)) {
    Hid attr = attribute_handle(H5Acreate2(object, name.c_str(), H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT), "attribute " + name);
    check(H5Awrite(attr, H5T_NATIVE_DOUBLE, d), "attribute " + name);
  } else {
    const auto& s = std::get<std::string>(value);
    Hid type = fixed_string_type(s.size());
    Hid attr = attribute_handle(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), "attribute " + name);
    const std::string padded = s.empty() ? std::string(1, '\0') : s;
    check(H5Awrite(attr, type, padded.data()), "attribute " + name);
  }
}

Hid create_group(hid_t parent, const std::string& name) {
  return group_handle(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "group " + name);
}

// A chunked, compressed [iterations, ranks] dataset; this rank writes column `rank`.
template <class T>
void write_columns(hid_t group, const std::string& name, hid_t type, const std::vector<T>& column, int rank,
                   int ranks, hid_t transfer) {
  const hsize_t dims[2] = {column.size(), static_cast<hsize_t>(ranks)};
  Hid file_space = space_handle(H5Screate_simple(2, dims, nullptr), "dataspace " + name);
  Hid create = plist_handle(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate");
  if (!column.empty()) {
    const hsize_t chunk[2] = {std::min<hsize_t>(column.size(), kChunkIterations), static_cast<hsize_t>(ranks)};
    check(H5Pset_chunk(create, 2, chunk), "H5Pset_chunk " + name);
    check(H5Pset_deflate(create, kDeflateLevel), "H5Pset_deflate " + name);
  }
  Hid dataset = dataset_handle(H5Dcreate2(group, name.c_str(), type, file_space, H5P_DEFAULT, create, H5P_DEFAULT), "dataset " + name);
  const hsize_t start[2] = {0, static_cast<hsize_t>(rank)};
  const hsize_t count[2] = {column.size(), 1};
  check(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, count, nullptr), "hyperslab " + name);
  const hsize_t mem_dims[1] = {column.size()};
  Hid mem_space = space_handle(H5Screate_simple(1, mem_dims, nullptr), "memspace " + name);
  check(H5Dwrite(dataset, type, mem_space, file_space, transfer, column.data()), "write " + name);
}

// A 1-D dataset written by rank 0 alone; the others take part with empty selections.
void write_series(hid_t group, const std::string& name, const std::vector<double>& values, bool root, hid_t transfer) {
  const hsize_t dims[1] = {values.size()};
  Hid file_space = space_handle(H5Screate_simple(1, dims, nullptr), "dataspace " + name);
  Hid dataset = dataset_handle(H5Dcreate2(group, name.c_str(), H5T_NATIVE_DOUBLE, file_space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "dataset " + name);
  Hid mem_space = space_handle(H5Screate_simple(1, dims, nullptr), "memspace " + name);
  if (!root) {
    check(H5Sselect_none(file_space), "H5Sselect_none");
    check(H5Sselect_none(mem_space), "H5Sselect_none");
  }
  check(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, mem_space, file_space, transfer, values.data()), "write " + name);
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

}  // namespace

ReportWriter::ReportWriter(comm::Communicator& comm, std::filesystem::path final_path, const RunMetadata& metadata)
    : comm_(comm), final_path_(std::move(final_path)) {
  silence_hdf5_errors();
  const bool root = comm.rank() == 0;
  // Rank 0 decides, everyone agrees: no rank may enter the collective create alone.
  const std::string problem = broadcast(comm, root ? cannot_create(final_path_) : "");
  if (!problem.empty()) throw InputError(final_path_.string() + ": cannot create report: " + problem);
  temp_path_ = broadcast(comm, root ? temporary_path_for(final_path_).string() : "");
  register_temp_file(temp_path_);

  const auto handle = comm.native_handle();
  EMBSCALE_EXPECTS(handle.kind == "mpi", "the HDF5 report needs an MPI communicator");
  const MPI_Comm mpi_comm = *static_cast<const MPI_Comm*>(handle.handle);
  Hid access = plist_handle(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate");
  check(H5Pset_fapl_mpio(access, mpi_comm, MPI_INFO_NULL), "H5Pset_fapl_mpio");
  file_ = file_handle(H5Fcreate(temp_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access), "create " + temp_path_.string());
  collective_transfer_ = plist_handle(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate");
  check(H5Pset_dxpl_mpio(collective_transfer_, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
  for (const auto& [name, value] : metadata.attributes) write_attribute(file_, name, value);
  Hid runs = create_group(file_, "runs");
}

ReportWriter::~ReportWriter() {
  if (committed_) return;
  if (std::uncaught_exceptions() > 0) {
    // Unwinding from an error that other ranks may not share: closing is collective and could
    // wait forever, so leave the handles to the process's end and just remove the file.
    file_.release();
    collective_transfer_.release();
  } else {
    file_.close();
  }
  std::error_code ignored;
  std::filesystem::remove(temp_path_, ignored);
  unregister_temp_file(temp_path_);
}

void ReportWriter::check_same_on_all_ranks(const std::string& description) {
  const auto digest = fnv1a64(reinterpret_cast<const unsigned char*>(description.data()), description.size());
  const auto low = comm_.allreduce(digest, comm::ReduceOp::kMin);
  const auto high = comm_.allreduce(digest, comm::ReduceOp::kMax);
  EMBSCALE_EXPECTS(low == high, "every rank must write the same report structure");
}

void ReportWriter::write_run(const RunRecord& run) {
  std::string shape = run.id + "|" + join(run.phase_names);
  for (const auto& [name, column] : run.timings) shape += "|t:" + name + ":" + std::to_string(column.size());
  for (const auto& [name, column] : run.counters) shape += "|c:" + name + ":" + std::to_string(column.size());
  for (const auto& [name, values] : run.series) shape += "|s:" + name + ":" + std::to_string(values.size());
  check_same_on_all_ranks(shape);

  Hid runs = group_handle(H5Gopen2(file_, "runs", H5P_DEFAULT), "group runs");
  Hid group = create_group(runs, run.id);
  for (const auto& field : run.parameters) write_attribute(group, field.name, field.value);
  write_attribute(group, "phases", join(run.phase_names));
  write_attribute(group, "samples", std::string("raw"));  // every iteration kept (no cap reached)
  Hid timings = create_group(group, "timings");
  for (const auto& [name, column] : run.timings)
    write_columns(timings, name, H5T_NATIVE_DOUBLE, column, comm_.rank(), comm_.size(), collective_transfer_);
  Hid counters = create_group(group, "counters");
  for (const auto& [name, column] : run.counters)
    write_columns(counters, name, H5T_NATIVE_INT64, column, comm_.rank(), comm_.size(), collective_transfer_);
  Hid series = create_group(group, "series");
  for (const auto& [name, values] : run.series)
    write_series(series, name, values, comm_.rank() == 0, collective_transfer_);
}

void ReportWriter::write_summary(const std::vector<SummaryRow>& rows) {
  if (rows.empty()) return;
  // Column layout from the first row; every row must have the same fields and kinds.
  const SummaryRow& first = rows.front();
  std::vector<std::size_t> string_size(first.size(), 1);
  std::string shape;
  for (const auto& row : rows) {
    EMBSCALE_EXPECTS(row.size() == first.size(), "every summary row must have the same fields");
    for (std::size_t f = 0; f < row.size(); ++f) {
      EMBSCALE_EXPECTS(row[f].name == first[f].name && row[f].value.index() == first[f].value.index(),
                       "summary field " + row[f].name + " differs between rows");
      if (const auto* s = std::get_if<std::string>(&row[f].value)) string_size[f] = std::max(string_size[f], s->size());
    }
  }
  for (std::size_t f = 0; f < first.size(); ++f) shape += first[f].name + ":" + std::to_string(string_size[f]) + "|";
  check_same_on_all_ranks(shape + std::to_string(rows.size()));

  std::vector<Hid> member_types;
  std::vector<std::size_t> offsets;
  std::size_t record_size = 0;
  for (std::size_t f = 0; f < first.size(); ++f) {
    offsets.push_back(record_size);
    if (first[f].value.index() == 0) {
      member_types.emplace_back(type_handle(H5Tcopy(H5T_NATIVE_INT64), "H5Tcopy"));
      record_size += sizeof(std::int64_t);
    } else if (first[f].value.index() == 1) {
      member_types.emplace_back(type_handle(H5Tcopy(H5T_NATIVE_DOUBLE), "H5Tcopy"));
      record_size += sizeof(double);
    } else {
      member_types.push_back(fixed_string_type(string_size[f]));
      record_size += string_size[f];
    }
  }
  Hid compound = type_handle(H5Tcreate(H5T_COMPOUND, record_size), "H5Tcreate compound");
  for (std::size_t f = 0; f < first.size(); ++f)
    check(H5Tinsert(compound, first[f].name.c_str(), offsets[f], member_types[f]), "H5Tinsert " + first[f].name);

  std::vector<unsigned char> records(rows.size() * record_size, 0);
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t f = 0; f < first.size(); ++f) {
      unsigned char* at = records.data() + r * record_size + offsets[f];
      std::visit([&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) std::memcpy(at, v.data(), v.size());
        else std::memcpy(at, &v, sizeof v);
      }, rows[r][f].value);
    }

  const hsize_t dims[1] = {rows.size()};
  Hid file_space = space_handle(H5Screate_simple(1, dims, nullptr), "dataspace summary");
  Hid dataset = dataset_handle(H5Dcreate2(file_, "summary", compound, file_space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "dataset summary");
  Hid mem_space = space_handle(H5Screate_simple(1, dims, nullptr), "memspace summary");
  if (comm_.rank() != 0) {
    check(H5Sselect_none(file_space), "H5Sselect_none");
    check(H5Sselect_none(mem_space), "H5Sselect_none");
  }
  check(H5Dwrite(dataset, compound, mem_space, file_space, collective_transfer_, records.data()), "write summary");
}

void ReportWriter::commit() {
  collective_transfer_.close();
  file_.close();  // collective: flushes everything
  comm_.barrier();
  // Rank 0 renames; all ranks learn the outcome (nobody returns before the report exists under
  // its final name, and a failed rename fails every rank instead of leaving them waiting).
  std::string problem;
  if (comm_.rank() == 0) {
    try {
      commit_temp_file(temp_path_, final_path_);
    } catch (const Error& e) {
      problem = e.what();
    }
  }
  problem = broadcast(comm_, problem);
  unregister_temp_file(temp_path_);
  committed_ = true;
  if (!problem.empty()) {
    std::error_code ignored;
    if (comm_.rank() == 0) std::filesystem::remove(temp_path_, ignored);
    throw Error(problem);
  }
}

}  // namespace embscale::report
