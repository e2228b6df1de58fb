#include "report/hdf5_handles.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "core/error.hpp"

namespace embscale::report {
namespace {

struct StackEntry {
  std::string function;     // "H5Gcreate2"
  std::string description;  // what the function was doing ("unable to create file")
  std::string minor;        // HDF5's class of the error ("Object already exists")
};

herr_t collect_entry(unsigned, const H5E_error2_t* entry, void* out) {
  StackEntry e;
  if (entry->func_name) e.function = entry->func_name;
  if (entry->desc) e.description = entry->desc;
  char text[256] = {};
  H5E_type_t type{};
  if (H5Eget_msg(entry->min_num, &type, text, sizeof text) > 0) e.minor = text;
  static_cast<std::vector<StackEntry>*>(out)->push_back(std::move(e));
  return 0;
}

}  // namespace

void silence_hdf5_errors() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

std::string take_hdf5_error() {
  // Walked downward, the stack starts at the API function and ends at the innermost cause:
  // H5Dcreate2 "unable to create dataset" ... "name already exists". Both ends are worth
  // printing, and the API function's name.
  std::vector<StackEntry> stack;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect_entry, &stack);
  H5Eclear2(H5E_DEFAULT);
  if (stack.empty()) return "";
  const auto text = [](const StackEntry& e) { return e.description.empty() ? e.minor : e.description; };
  std::string out = text(stack.front());
  if (stack.size() > 1 && text(stack.back()) != out) out += ": " + text(stack.back());
  if (!stack.front().function.empty()) out += " [" + stack.front().function + "]";
  return out;
}

void throw_hdf5_error(std::string_view what) {
  const std::string cause = take_hdf5_error();
  throw Error(std::string(what) + ": " + (cause.empty() ? std::string("HDF5 call failed") : cause));
}

Dataspace scalar_space() { return {H5Screate(H5S_SCALAR), "create scalar dataspace"}; }

Dataspace simple_space(std::initializer_list<hsize_t> dims, std::string_view what) {
  const std::vector<hsize_t> extent(dims);
  return {H5Screate_simple(static_cast<int>(extent.size()), extent.data(), nullptr), what};
}

Datatype fixed_string_type(std::size_t size) {
  Datatype type(H5Tcopy(H5T_C_S1), "copy string type");
  check(H5Tset_size(type, std::max<std::size_t>(size, 1)), "set string size");
  check(H5Tset_strpad(type, H5T_STR_NULLPAD), "set string padding");
  check(H5Tset_cset(type, H5T_CSET_UTF8), "set string character set");  // command lines, JSON
  return type;
}

PropertyList property_list(hid_t cls, std::string_view what) { return {H5Pcreate(cls), what}; }

std::string object_name(hid_t id) {
  const ssize_t size = H5Iget_name(id, nullptr, 0);
  if (size <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return "?";
  }
  std::string name(static_cast<std::size_t>(size), '\0');
  H5Iget_name(id, name.data(), name.size() + 1);
  return name;
}

}  // namespace embscale::report
