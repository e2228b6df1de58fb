#include "report/reader.hpp"

#include <cstring>

#include "core/error.hpp"
#include "report/hdf5_handles.hpp"
#include "report/metadata.hpp"

namespace embscale::report {
namespace {

SummaryValue read_value(hid_t attr_or_dataset, hid_t type, bool is_attribute) {
  const auto kind = H5Tget_class(type);
  if (kind == H5T_INTEGER) {
    std::int64_t v = 0;
    check(is_attribute ? H5Aread(attr_or_dataset, H5T_NATIVE_INT64, &v) : -1, "read integer attribute");
    return v;
  }
  if (kind == H5T_FLOAT) {
    double v = 0;
    check(is_attribute ? H5Aread(attr_or_dataset, H5T_NATIVE_DOUBLE, &v) : -1, "read float attribute");
    return v;
  }
  if (kind == H5T_STRING) {
    if (H5Tis_variable_str(type) > 0) {
      char* text = nullptr;
      Hid mem = type_handle(H5Tcopy(H5T_C_S1), "H5Tcopy");
      check(H5Tset_size(mem, H5T_VARIABLE), "H5Tset_size");
      check(H5Aread(attr_or_dataset, mem, &text), "read string attribute");
      std::string out = text ? text : "";
      H5free_memory(text);
      return out;
    }
    std::string buffer(H5Tget_size(type), '\0');
    check(H5Aread(attr_or_dataset, type, buffer.data()), "read string attribute");
    return std::string(buffer.c_str());
  }
  return std::string("(unsupported attribute type)");
}

std::map<std::string, SummaryValue> read_attributes(hid_t object) {
  std::map<std::string, SummaryValue> out;
  H5O_info_t info;
  check(H5Oget_info2(object, &info, H5O_INFO_NUM_ATTRS), "H5Oget_info");
  for (hsize_t i = 0; i < info.num_attrs; ++i) {
    Hid attr = attribute_handle(H5Aopen_by_idx(object, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT, H5P_DEFAULT), "open attribute");
    const auto name_size = H5Aget_name(attr, 0, nullptr);
    std::string name(static_cast<std::size_t>(name_size), '\0');
    H5Aget_name(attr, static_cast<std::size_t>(name_size) + 1, name.data());
    Hid type = type_handle(H5Aget_type(attr), "attribute type");
    out[name] = read_value(attr, type, true);
  }
  return out;
}

std::vector<std::string> child_names(hid_t group) {
  H5G_info_t info;
  check(H5Gget_info(group, &info), "H5Gget_info");
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const auto size = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    std::string name(static_cast<std::size_t>(size), '\0');
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), static_cast<std::size_t>(size) + 1, H5P_DEFAULT);
    names.push_back(name);
  }
  return names;
}

template <class T>
Matrix<T> read_matrix(hid_t group, const std::string& name, hid_t mem_type) {
  Hid dataset = dataset_handle(H5Dopen2(group, name.c_str(), H5P_DEFAULT), "dataset " + name);
  Hid space = space_handle(H5Dget_space(dataset), "dataspace " + name);
  hsize_t dims[2] = {0, 0};
  const int rank = H5Sget_simple_extent_dims(space, dims, nullptr);
  Matrix<T> m;
  m.rows = static_cast<std::size_t>(dims[0]);
  m.cols = rank == 2 ? static_cast<std::size_t>(dims[1]) : 1;
  m.values.resize(m.rows * m.cols);
  if (!m.values.empty()) check(H5Dread(dataset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, m.values.data()), "read " + name);
  return m;
}

std::vector<SummaryRow> read_summary(hid_t file) {
  std::vector<SummaryRow> rows;
  if (H5Lexists(file, "summary", H5P_DEFAULT) <= 0) return rows;
  Hid dataset = dataset_handle(H5Dopen2(file, "summary", H5P_DEFAULT), "dataset summary");
  Hid type = type_handle(H5Dget_type(dataset), "summary type");
  Hid space = space_handle(H5Dget_space(dataset), "summary space");
  const auto n = static_cast<std::size_t>(H5Sget_simple_extent_npoints(space));
  const std::size_t record = H5Tget_size(type);
  std::vector<unsigned char> data(n * record);
  if (n > 0) check(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), "read summary");
  const int members = H5Tget_nmembers(type);
  rows.resize(n);
  for (int m = 0; m < members; ++m) {
    char* raw_name = H5Tget_member_name(type, static_cast<unsigned>(m));
    const std::string name = raw_name;
    H5free_memory(raw_name);
    const std::size_t offset = H5Tget_member_offset(type, static_cast<unsigned>(m));
    Hid member = type_handle(H5Tget_member_type(type, static_cast<unsigned>(m)), "member type");
    const auto kind = H5Tget_class(member);
    const std::size_t size = H5Tget_size(member);
    for (std::size_t r = 0; r < n; ++r) {
      const unsigned char* at = data.data() + r * record + offset;
      SummaryValue v;
      if (kind == H5T_INTEGER && size == sizeof(std::int64_t)) {
        std::int64_t x;
        std::memcpy(&x, at, sizeof x);
        v = x;
      } else if (kind == H5T_FLOAT && size == sizeof(double)) {
        double x;
        std::memcpy(&x, at, sizeof x);
        v = x;
      } else {
        v = std::string(reinterpret_cast<const char*>(at), strnlen(reinterpret_cast<const char*>(at), size));
      }
      rows[r].push_back({name, v});
    }
  }
  return rows;
}

}  // namespace

ReportData read_report(const std::filesystem::path& path) {
  silence_hdf5_errors();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(path.string() + ": no such report file");
  if (H5Fis_hdf5(path.c_str()) <= 0) throw InputError(path.string() + ": not an HDF5 file");
  Hid file = file_handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "open " + path.string());

  ReportData data;
  data.attributes = read_attributes(file);
  const auto version = data.attributes.find("schema_version");
  if (version == data.attributes.end() || !std::holds_alternative<std::int64_t>(version->second))
    throw InputError(path.string() + ": not an embscale report (no integer schema_version attribute)");
  if (std::get<std::int64_t>(version->second) != kReportSchemaVersion)
    throw InputError(path.string() + ": report schema version " + std::to_string(std::get<std::int64_t>(version->second)) +
                     ", this embscale reads version " + std::to_string(kReportSchemaVersion));
  data.summary = read_summary(file);

  if (H5Lexists(file, "runs", H5P_DEFAULT) > 0) {
    Hid runs = group_handle(H5Gopen2(file, "runs", H5P_DEFAULT), "group runs");
    for (const auto& id : child_names(runs)) {
      ReportData::Run run;
      run.id = id;
      Hid group = group_handle(H5Gopen2(runs, id.c_str(), H5P_DEFAULT), "run " + id);
      for (auto& [name, value] : read_attributes(group)) run.parameters.push_back({name, value});
      const auto read_group = [&](const char* sub, auto&& each) {
        if (H5Lexists(group, sub, H5P_DEFAULT) <= 0) return;
        Hid g = group_handle(H5Gopen2(group, sub, H5P_DEFAULT), std::string("group ") + sub);
        for (const auto& name : child_names(g)) each(g, name);
      };
      read_group("timings", [&](hid_t g, const std::string& name) { run.timings[name] = read_matrix<double>(g, name, H5T_NATIVE_DOUBLE); });
      read_group("counters", [&](hid_t g, const std::string& name) { run.counters[name] = read_matrix<std::int64_t>(g, name, H5T_NATIVE_INT64); });
      read_group("series", [&](hid_t g, const std::string& name) { run.series[name] = read_matrix<double>(g, name, H5T_NATIVE_DOUBLE).values; });
      data.runs.push_back(std::move(run));
    }
  }
  return data;
}

}  // namespace embscale::report
