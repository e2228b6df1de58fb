#include "report/reader.hpp"

#include <mpi.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"
#include "report/hdf5_handles.hpp"
#include "report/layout.hpp"
#include "report/metadata.hpp"
#include "report/report_kind.hpp"

namespace embscale::report {
namespace {

// Names of the attributes of `object`, or of the links in group `object`, in creation order
// where the file tracks it (files of embscale do), else by name. The HDF5 callbacks only
// collect names: nothing may throw through the C library.
herr_t collect_attribute(hid_t, const char* name, const H5A_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->emplace_back(name);
  return 0;
}
herr_t collect_link(hid_t, const char* name, const H5L_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->emplace_back(name);
  return 0;
}

template <class Iterate> std::vector<std::string> names_in_order(Iterate iterate, const std::string& where) {
  std::vector<std::string> names;
  for (const H5_index_t index : {H5_INDEX_CRT_ORDER, H5_INDEX_NAME}) {
    names.clear();
    hsize_t position = 0;
    if (iterate(index, &position, &names) >= 0) return names;
    if (index == H5_INDEX_NAME) throw_hdf5_error("list the contents of " + where);
    H5Eclear2(H5E_DEFAULT);  // creation order not tracked: fall back to names
  }
  return names;
}

std::vector<std::string> attribute_names(hid_t object, const std::string& where) {
  return names_in_order(
      [&](H5_index_t index, hsize_t* position, std::vector<std::string>* out) {
        return H5Aiterate2(object, index, H5_ITER_INC, position, collect_attribute, out);
      },
      where);
}

std::vector<std::string> link_names(hid_t group, const std::string& where) {
  return names_in_order(
      [&](H5_index_t index, hsize_t* position, std::vector<std::string>* out) {
        return H5Literate(group, index, H5_ITER_INC, position, collect_link, out);
      },
      where);
}

// The memory type for reading the variable-length strings of `file_type`: of its character set,
// since HDF5 converts none between ASCII and UTF-8 (h5py writes UTF-8; "no appropriate function
// for conversion path" otherwise).
Datatype variable_string_like(hid_t file_type) {
  Datatype memory(H5Tcopy(H5T_C_S1), "copy string type");
  check(H5Tset_size(memory, H5T_VARIABLE), "set string size");
  check(H5Tset_cset(memory, H5Tget_cset(file_type)), "set string character set");
  return memory;
}

// Integer and float classes as int64 and double (HDF5 converts), strings fixed or variable.
SummaryValue read_attribute(hid_t object, const std::string& name, const std::string& where) {
  const std::string what = "attribute " + name + " of " + where;
  const Attribute attr(H5Aopen(object, name.c_str(), H5P_DEFAULT), "open " + what);
  const Datatype type(H5Aget_type(attr), "type of " + what);
  const Dataspace space(H5Aget_space(attr), "dataspace of " + what);
  const hssize_t points = H5Sget_simple_extent_npoints(space);
  if (points != 1) return "(" + std::to_string(points) + " values)";
  switch (H5Tget_class(type)) {
    case H5T_INTEGER: {
      std::int64_t v = 0;
      check(H5Aread(attr, H5T_NATIVE_INT64, &v), "read " + what);
      return v;
    }
    case H5T_FLOAT: {
      double v = 0;
      check(H5Aread(attr, H5T_NATIVE_DOUBLE, &v), "read " + what);
      return v;
    }
    case H5T_STRING: {
      if (H5Tis_variable_str(type) > 0) {
        char* text = nullptr;
        const Datatype memory = variable_string_like(type);
        check(H5Aread(attr, memory, &text), "read " + what);
        std::string out = text ? text : "";
        H5free_memory(text);
        return out;
      }
      std::string buffer(H5Tget_size(type), '\0');
      check(H5Aread(attr, type, buffer.data()), "read " + what);
      return std::string(buffer.c_str());
    }
    default: return std::string("(unsupported type)");
  }
}

std::map<std::string, SummaryValue> read_attributes(hid_t object, const std::string& where) {
  std::map<std::string, SummaryValue> out;
  for (const auto& name : attribute_names(object, where)) out[name] = read_attribute(object, name, where);
  return out;
}

template <class T> hid_t native_type() {
  if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
  else return H5T_NATIVE_INT64;
}

// What the schema's datasets are, for messages.
constexpr const char* kPerRank = "a 2-D [iteration, rank] dataset";
constexpr const char* kSeries = "a 1-D [iteration] dataset";
constexpr const char* kTable = "a 2-D float64 [row, column] table";

// A dataset of `dimensions` dimensions (`expected` says what it should be) read whole as T; its
// extent in `extent`.
template <class T>
std::vector<T> read_array(hid_t group, const std::string& name, const std::string& where, int dimensions,
                          const char* expected, std::vector<hsize_t>& extent) {
  const Dataset dataset(H5Dopen2(group, name.c_str(), H5P_DEFAULT), "open dataset " + where);
  const Dataspace space(H5Dget_space(dataset), "dataspace of " + where);
  const int found = H5Sget_simple_extent_ndims(space);
  if (found != dimensions)
    throw InputError(where + ": expected " + expected + ", found " + std::to_string(found) + " dimensions");
  extent.assign(static_cast<std::size_t>(dimensions), 0);
  H5Sget_simple_extent_dims(space, extent.data(), nullptr);
  std::size_t count = 1;
  for (const auto d : extent) count *= static_cast<std::size_t>(d);
  std::vector<T> values(count);
  if (count > 0)
    check(H5Dread(dataset, native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), "read " + where);
  return values;
}

template <class T> Matrix<T> read_matrix(hid_t group, const std::string& name, const std::string& where) {
  std::vector<hsize_t> extent;
  Matrix<T> m;
  m.values = read_array<T>(group, name, where, 2, kPerRank, extent);
  m.rows = static_cast<std::size_t>(extent[0]);
  m.cols = static_cast<std::size_t>(extent[1]);
  return m;
}

// One column of a compound dataset through a one-member memory type (HDF5 picks the member by
// name and converts): int64, double, or text.
std::vector<SummaryValue> read_member(hid_t dataset, hid_t file_member, const std::string& name, std::size_t rows) {
  const std::string what = "read field " + name + " of /summary";
  std::vector<SummaryValue> out(rows);
  const auto one_member = [&](hid_t member_type, std::size_t size) {
    Datatype record(H5Tcreate(H5T_COMPOUND, size), "create memory type for " + name);
    check(H5Tinsert(record, name.c_str(), 0, member_type), "create memory type for " + name);
    return record;
  };
  switch (H5Tget_class(file_member)) {
    case H5T_INTEGER:
    case H5T_FLOAT: {
      const bool integer = H5Tget_class(file_member) == H5T_INTEGER;
      std::vector<std::int64_t> ints(integer ? rows : 0);
      std::vector<double> doubles(integer ? 0 : rows);
      const Datatype record = one_member(integer ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, 8);
      void* data = integer ? static_cast<void*>(ints.data()) : static_cast<void*>(doubles.data());
      check(H5Dread(dataset, record, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), what);
      for (std::size_t r = 0; r < rows; ++r) out[r] = integer ? SummaryValue(ints[r]) : SummaryValue(doubles[r]);
      return out;
    }
    case H5T_STRING: {
      if (H5Tis_variable_str(file_member) > 0) {
        const Datatype text = variable_string_like(file_member);
        const Datatype record = one_member(text, sizeof(char*));
        std::vector<char*> strings(rows, nullptr);
        check(H5Dread(dataset, record, H5S_ALL, H5S_ALL, H5P_DEFAULT, strings.data()), what);
        for (std::size_t r = 0; r < rows; ++r) out[r] = std::string(strings[r] ? strings[r] : "");
        const Dataspace space(H5Dget_space(dataset), "dataspace of /summary");
        H5Dvlen_reclaim(record, space, H5P_DEFAULT, strings.data());
        return out;
      }
      const std::size_t size = H5Tget_size(file_member);
      const Datatype same(H5Tcopy(file_member), "copy string type");  // no charset conversion
      const Datatype record = one_member(same, size);
      std::vector<char> bytes(rows * size);
      check(H5Dread(dataset, record, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()), what);
      for (std::size_t r = 0; r < rows; ++r) {
        const char* at = bytes.data() + r * size;
        out[r] = std::string(at, strnlen(at, size));
      }
      return out;
    }
    default:
      for (auto& v : out) v = std::string("(unsupported type)");
      return out;
  }
}

std::vector<SummaryRow> read_summary(hid_t file) {
  std::vector<SummaryRow> rows;
  if (H5Lexists(file, "summary", H5P_DEFAULT) <= 0) return rows;
  const Dataset dataset(H5Dopen2(file, "summary", H5P_DEFAULT), "open dataset /summary");
  const Datatype type(H5Dget_type(dataset), "type of /summary");
  const Dataspace space(H5Dget_space(dataset), "dataspace of /summary");
  if (H5Tget_class(type) != H5T_COMPOUND || H5Sget_simple_extent_ndims(space) != 1)
    throw InputError("/summary: expected a 1-D compound dataset (a row per run)");
  rows.resize(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  const int members = H5Tget_nmembers(type);
  for (unsigned m = 0; m < static_cast<unsigned>(std::max(members, 0)); ++m) {
    char* raw = H5Tget_member_name(type, m);
    const std::string name = raw ? raw : "";
    H5free_memory(raw);
    const Datatype member(H5Tget_member_type(type, m), "type of /summary field " + name);
    const auto column = read_member(dataset, member, name, rows.size());
    for (std::size_t r = 0; r < rows.size(); ++r) rows[r].push_back({name, column[r]});
  }
  return rows;
}

// A text attribute of `object` (`where`), or "" when it has none.
std::string text_attribute(hid_t object, const char* name, const std::string& where) {
  if (H5Aexists(object, name) <= 0) return "";
  const SummaryValue value = read_attribute(object, name, where);
  if (const auto* text = std::get_if<std::string>(&value)) return *text;
  throw InputError(where + ": expected the attribute " + name + " to be text");
}

// The table at /runs/<id>/<group>/<name> (`where`): a 2-D float dataset, its columns and meaning.
ReportTable read_table(hid_t group, const std::string& name, const std::string& where) {
  const Object object(H5Oopen(group, name.c_str(), H5P_DEFAULT), "open " + where);
  if (H5Iget_type(object) != H5I_DATASET) throw InputError(where + ": expected " + kTable + ", found a group");
  const Datatype type(H5Dget_type(object), "type of " + where);
  if (H5Tget_class(type) != H5T_FLOAT)  // float32 from other tools converts exactly
    throw InputError(where + ": expected " + kTable + ", found a dataset of another type than float");
  ReportTable table;
  std::vector<hsize_t> extent;
  table.values = read_array<double>(group, name, where, 2, kTable, extent);
  const auto width = static_cast<std::size_t>(extent[1]);
  if (width == 0) throw InputError(where + ": expected " + kTable + ", found one with no columns");
  if (H5Aexists(object, "columns") > 0) {
    table.columns = split_names(text_attribute(object, "columns", where));
    if (table.columns.size() != width)
      throw InputError(where + ": the attribute columns names " + std::to_string(table.columns.size()) +
                       " columns, the dataset has " + std::to_string(width));
  } else {
    for (std::size_t c = 0; c < width; ++c) table.columns.push_back("column " + std::to_string(c));
  }
  table.meaning = text_attribute(object, "meaning", where);
  return table;
}

// Every group of the run but the reserved ones holds tables, each keyed "<group>/<name>".
// Other objects directly in the run group (none in the schema) are passed over.
void read_tables(hid_t run_group, const std::string& where, std::map<std::string, ReportTable>& tables) {
  for (const auto& group_name : link_names(run_group, where)) {
    if (is_reserved_run_group(group_name)) continue;
    const std::string group_where = where + "/" + group_name;
    const Object group(H5Oopen(run_group, group_name.c_str(), H5P_DEFAULT), "open " + group_where);
    if (H5Iget_type(group) != H5I_GROUP) continue;
    for (const auto& name : link_names(group, group_where))
      tables[group_name + "/" + name] = read_table(group, name, group_where + "/" + name);
  }
}

ReportData::Run read_run(hid_t runs, const std::string& id) {
  const std::string where = "/runs/" + id;
  const Group group(H5Gopen2(runs, id.c_str(), H5P_DEFAULT), "open group " + where);
  ReportData::Run run;
  run.id = id;
  for (const auto& name : attribute_names(group, where)) {
    SummaryValue value = read_attribute(group, name, where);
    const auto* text = std::get_if<std::string>(&value);
    const auto* integer = std::get_if<std::int64_t>(&value);
    if (name == "phases" && text) run.phase_names = split_names(*text);
    else if (name == "phase_meanings" && text) run.phase_meanings = parse_phase_meanings(*text);
    else if (name == "samples" && text) run.samples = *text;
    else if (name == "point" && integer) run.point = *integer;
    else if (name == "repetition" && integer) run.repetition = *integer;
    else if (name == "sharding_plan" && text) run.sharding_plan = *text;
    else if (name == "transport_details" && text) run.transport = *text;
    else run.parameters.push_back({name, std::move(value)});
  }
  if (H5Lexists(group, "metadata", H5P_DEFAULT) > 0) {
    const Group metadata(H5Gopen2(group, "metadata", H5P_DEFAULT), "open group " + where + "/metadata");
    run.metadata = read_attributes(metadata, where + "/metadata");
  }
  const auto each = [&](const char* sub, auto&& read) {
    if (H5Lexists(group, sub, H5P_DEFAULT) <= 0) return;
    const std::string sub_where = where + "/" + sub;
    const Group g(H5Gopen2(group, sub, H5P_DEFAULT), "open group " + sub_where);
    for (const auto& name : link_names(g, sub_where)) read(g, name, sub_where + "/" + name);
  };
  each("timings", [&](hid_t g, const std::string& name, const std::string& w) {
    run.timings[name] = read_matrix<double>(g, name, w);
  });
  each("counters", [&](hid_t g, const std::string& name, const std::string& w) {
    run.counters[name] = read_matrix<std::int64_t>(g, name, w);
  });
  each("series", [&](hid_t g, const std::string& name, const std::string& w) {
    std::vector<hsize_t> extent;
    run.series[name] = read_array<double>(g, name, w, 1, kSeries, extent);
  });
  read_tables(group, where, run.tables);
  return run;
}

}  // namespace

std::string ReportData::kind() const { return report_kind(attributes); }

namespace {

ReportData read_in_this_process(const std::filesystem::path& path) {
  silence_hdf5_errors();
  const std::string file_name = path.string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(file_name + ": no such report file");
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(file_name + ": not a file");
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw InputError(file_name + ": not an HDF5 file");
  }
  try {
    PropertyList access = property_list(H5P_FILE_ACCESS, "file access properties");
    // Reading takes a shared lock; where the file system has none (some NFS and Lustre mounts),
    // read anyway rather than fail.
    check(H5Pset_file_locking(access, true, true), "H5Pset_file_locking");
    const File file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, access), "cannot open report");

    ReportData data;
    data.attributes = read_attributes(file, "/");
    const auto version = data.attributes.find("schema_version");
    if (version == data.attributes.end() || !std::holds_alternative<std::int64_t>(version->second))
      throw InputError("not an embscale report (no integer schema_version attribute)");
    if (const auto v = std::get<std::int64_t>(version->second); v != kReportSchemaVersion)
      throw InputError("report schema version " + std::to_string(v) + ", this embscale reads version " +
                       std::to_string(kReportSchemaVersion));
    report_kind(data.attributes);  // throws when it is not text: say so now, naming the file
    data.summary = read_summary(file);
    if (H5Lexists(file, "runs", H5P_DEFAULT) > 0) {
      const Group runs(H5Gopen2(file, "runs", H5P_DEFAULT), "open group /runs");
      for (const auto& id : link_names(runs, "/runs")) data.runs.push_back(read_run(runs, id));
    }
    return data;
  } catch (const Error& e) {
    throw InputError(file_name + ": " + e.what());  // the file is the input: say which
  }
}

// Reads the report in a child process first: HDF5 (1.10) can crash on a damaged file rather than
// fail (a fuzzed report freed a wild pointer inside H5Literate after 19 mutations), and a crash of
// `embscale report` or `compare` on a bad file is no answer. The child reads the whole report
// and exits 0, or 2 with the InputError's message on a pipe; anything else (a signal, another
// exit) is a file HDF5 cannot read safely. Returns normally when the child read it.
void read_in_a_child(const std::filesystem::path& path) {
  int fds[2];
  if (::pipe(fds) != 0) return;  // no isolation to be had: read in this process, as before
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  if (child == 0) {
    ::close(fds[0]);
    // A crash must end the child by its signal (not a handler of the parent's, a sanitizer's).
    for (const int signal : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) std::signal(signal, SIG_DFL);
    int code = 0;
    try {
      (void)read_in_this_process(path);
    } catch (const InputError& e) {
      const std::string message = e.what();
      [[maybe_unused]] const auto written = ::write(fds[1], message.data(), message.size());
      code = 2;
    } catch (...) {
      code = 3;
    }
    ::_exit(code);  // no exit handlers: HDF5's would close the file again
  }
  ::close(fds[1]);
  std::string message;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    message.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) throw InputError(message);
  const std::string how = WIFSIGNALED(status) ? std::string("signal ") + ::strsignal(WTERMSIG(status))
                                              : "exit " + std::to_string(WEXITSTATUS(status));
  throw InputError(path.string() + ": the file is damaged: HDF5 failed reading it (" + how +
                   "); it is not a report embscale can read");
}

}  // namespace

ReportData read_report(const std::filesystem::path& path) {
  // Not under MPI (fork is unsafe there, and an MPI program reads the reports it wrote itself):
  // the serial commands (report, compare, merge) read what users give them.
  int mpi = 0;
  MPI_Initialized(&mpi);
  if (!mpi) read_in_a_child(path);
  return read_in_this_process(path);
}

}  // namespace embscale::report
