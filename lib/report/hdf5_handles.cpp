#include "report/hdf5_handles.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace embscale::report {

void silence_hdf5_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

herr_t check(herr_t status, const std::string& what) {
  if (status < 0) throw Error(what + ": HDF5 call failed");
  return status;
}

hid_t check_id(hid_t id, const std::string& what) {
  if (id < 0) throw Error(what + ": HDF5 call failed");
  return id;
}

Hid fixed_string_type(std::size_t size) {
  Hid type = type_handle(H5Tcopy(H5T_C_S1), "H5Tcopy");
  check(H5Tset_size(type, std::max<std::size_t>(size, 1)), "H5Tset_size");
  check(H5Tset_strpad(type, H5T_STR_NULLPAD), "H5Tset_strpad");
  return type;
}

}  // namespace embscale::report
