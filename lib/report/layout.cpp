#include "report/layout.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include "core/error.hpp"
#include "report/collective.hpp"

namespace embscale::report {

bool is_structural_attribute(std::string_view name) {
  return name == "phases" || name == "phase_meanings" || name == "samples" || name == "point" || name == "repetition" ||
         name == "sharding_plan" || name == "transport_details";
}

bool is_reserved_run_group(std::string_view name) {
  return name == "timings" || name == "counters" || name == "series" || name == "metadata" ||
         name == "timings_summary" || name == "counters_summary";
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : ",") + names[i];
  return out;
}

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t start = 0; !text.empty() && start <= text.size();) {
    const auto comma = std::min(text.find(',', start), text.size());
    out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

std::string phase_meanings_text(const std::vector<std::string>& names, const std::vector<std::string>& meanings) {
  EMBSCALE_EXPECTS(names.size() == meanings.size(), "one meaning per phase");
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) text += names[i] + ": " + meanings[i] + "\n";
  return text;
}

std::map<std::string, std::string> parse_phase_meanings(const std::string& text) {
  std::map<std::string, std::string> out;
  for (std::size_t start = 0; start < text.size();) {
    const auto end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    if (const auto colon = line.find(": "); colon != std::string::npos)
      out[line.substr(0, colon)] = line.substr(colon + 2);
    start = end + 1;
  }
  return out;
}

Group create_group(hid_t parent, const std::string& name, const std::string& where) {
  PropertyList create = property_list(H5P_GROUP_CREATE, "group creation properties");
  const unsigned order = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;
  check(H5Pset_link_creation_order(create, order), "H5Pset_link_creation_order");
  check(H5Pset_attr_creation_order(create, order), "H5Pset_attr_creation_order");
  return {H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, create, H5P_DEFAULT), "create group " + where};
}

Dataset create_dataset(hid_t parent, const std::string& name, hid_t type, std::initializer_list<hsize_t> dims,
                       const std::string& where) {
  const std::vector<hsize_t> extent(dims);
  const Dataspace space = simple_space(dims, "dataspace of " + where);
  PropertyList create = property_list(H5P_DATASET_CREATE, "dataset creation properties");
  const bool empty = std::any_of(extent.begin(), extent.end(), [](hsize_t d) { return d == 0; });
  if (!empty) {
    const hsize_t element = std::max<hsize_t>(H5Tget_size(type), 1);
    std::vector<hsize_t> chunk = extent;
    hsize_t per_row = element;
    if (chunk.size() == 2) {
      chunk[1] = std::min(chunk[1], kMaxChunkRanks);
      per_row *= chunk[1];
    }
    chunk[0] = std::clamp<hsize_t>(kChunkBytes / per_row, 1, extent[0]);
    check(H5Pset_chunk(create, static_cast<int>(chunk.size()), chunk.data()), "set chunks of " + where);
    check(H5Pset_shuffle(create), "set shuffle filter of " + where);
    check(H5Pset_deflate(create, kDeflateLevel), "set deflate filter of " + where);
  }
  return {H5Dcreate2(parent, name.c_str(), type, space, H5P_DEFAULT, create, H5P_DEFAULT), "create dataset " + where};
}

void write_attribute(hid_t object, const std::string& name, const SummaryValue& value, const std::string& where) {
  const std::string what = "attribute " + name + " of " + where;
  const Dataspace space = scalar_space();
  const auto create = [&](hid_t type) {
    return Attribute(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), "create " + what);
  };
  if (const auto* i = std::get_if<std::int64_t>(&value)) {
    check(H5Awrite(create(H5T_NATIVE_INT64), H5T_NATIVE_INT64, i), "write " + what);
  } else if (const auto* d = std::get_if<double>(&value)) {
    check(H5Awrite(create(H5T_NATIVE_DOUBLE), H5T_NATIVE_DOUBLE, d), "write " + what);
  } else {
    const auto& text = std::get<std::string>(value);
    const Datatype type = fixed_string_type(text.size());
    const Attribute attr = create(type);
    const std::string padded = text.empty() ? std::string(1, '\0') : text;  // the type is >= 1 byte
    check(H5Awrite(attr, type, padded.data()), "write " + what);
  }
}

SummaryTable::SummaryTable(const std::vector<SummaryRow>& rows) : rows_(rows) {
  Digest digest;
  digest.add(std::uint64_t{rows.size()});
  if (!rows.empty()) {
    const SummaryRow& first = rows.front();
    sizes_.assign(first.size(), 0);
    std::set<std::string> names;
    for (std::size_t f = 0; f < first.size(); ++f) {
      if (first[f].name.empty()) problem_ = "a field has an empty name";
      if (!names.insert(first[f].name).second) problem_ = "field " + first[f].name + " appears twice";
    }
    for (const auto& row : rows) {
      if (row.size() != first.size()) {
        problem_ = "rows have different numbers of fields (" + std::to_string(row.size()) + " and " +
                   std::to_string(first.size()) + ")";
        break;
      }
      for (std::size_t f = 0; f < row.size(); ++f) {
        if (row[f].name != first[f].name || row[f].value.index() != first[f].value.index())
          problem_ = "field " + std::to_string(f) + " is " + row[f].name + " in one row and " + first[f].name +
                     " in another, or of another type";
        if (const auto* s = std::get_if<std::string>(&row[f].value)) sizes_[f] = std::max(sizes_[f], s->size());
      }
    }
    for (std::size_t f = 0; f < first.size(); ++f) {
      if (first[f].value.index() == 0) sizes_[f] = sizeof(std::int64_t);
      else if (first[f].value.index() == 1) sizes_[f] = sizeof(double);
      else sizes_[f] = std::max<std::size_t>(sizes_[f], 1);
      offsets_.push_back(record_size_);
      record_size_ += sizes_[f];
      digest.add(first[f].name).add(std::uint64_t{first[f].value.index()}).add(std::uint64_t{sizes_[f]});
    }
  }
  digest.add(problem_);
  digest_ = digest.value();
}

void SummaryTable::write(hid_t parent, const std::string& name, bool root, hid_t collective) const {
  const SummaryRow& first = rows_.front();
  Datatype record(H5Tcreate(H5T_COMPOUND, record_size_), "create the summary's compound type");
  for (std::size_t f = 0; f < first.size(); ++f) {
    Datatype member = first[f].value.index() == 0   ? Datatype(H5Tcopy(H5T_NATIVE_INT64), "copy int64 type")
                      : first[f].value.index() == 1 ? Datatype(H5Tcopy(H5T_NATIVE_DOUBLE), "copy float64 type")
                                                    : fixed_string_type(sizes_[f]);
    check(H5Tinsert(record, first[f].name.c_str(), offsets_[f], member), "add summary field " + first[f].name);
  }
  // Packed records, NUL-padded strings.
  std::vector<unsigned char> records(root ? rows_.size() * record_size_ : 0, 0);
  for (std::size_t r = 0; root && r < rows_.size(); ++r)
    for (std::size_t f = 0; f < first.size(); ++f) {
      unsigned char* at = records.data() + r * record_size_ + offsets_[f];
      std::visit(
          [&](const auto& v) {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) std::memcpy(at, v.data(), v.size());
            else std::memcpy(at, &v, sizeof v);
          },
          rows_[r][f].value);
    }
  const std::string where = "/" + name;
  const Dataspace file_space = simple_space({rows_.size()}, "dataspace of " + where);
  const Dataspace memory = simple_space({rows_.size()}, "memory dataspace of " + where);
  const Dataset dataset(H5Dcreate2(parent, name.c_str(), record, file_space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                        "create dataset " + where);
  if (!root) {
    check(H5Sselect_none(file_space), "select none of " + where);
    check(H5Sselect_none(memory), "select none of " + where);
  }
  check(H5Dwrite(dataset, record, memory, file_space, collective, records.data()), "write " + where);
}

}  // namespace embscale::report
