// RAII over HDF5's C API (Debian ships no parallel C++ wrapper).
//
// * Handle<Close> owns one identifier and releases it with the matching H5?close. One alias per
//   kind of object (File, Group, Dataset, Dataspace, Datatype, PropertyList, Attribute, and
//   Object for whatever H5Oopen opened), so an identifier is always closed by the right function.
//   Predefined identifiers (H5T_NATIVE_*, H5P_DEFAULT) are never wrapped: they must not be closed.
// * A Handle is constructed from the C call's result and a description of what was attempted
//   ("create dataset /runs/run0/timings/lookup"); a negative result throws embscale::Error with
//   that description and HDF5's own explanation taken from its error stack (innermost cause),
//   e.g. "create group /runs/run0: unable to create group: name already exists [H5Gcreate2]".
// * silence_hdf5_errors() turns off HDF5's automatic printing of the error stack: users see our
//   messages, not pages of HDF5 traces (on every rank).
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace embscale::report {

// Idempotent. Called by every entry point of lib/report before its first HDF5 call.
void silence_hdf5_errors();

// HDF5's explanation of the last failure on this thread ("" when its error stack is empty):
// the top-level description, the innermost cause and the API function. Clears the stack.
std::string take_hdf5_error();

// Throws embscale::Error("<what>: <take_hdf5_error()>").
[[noreturn]] void throw_hdf5_error(std::string_view what);

// Returns `status`, or throws as above when it is negative.
inline herr_t check(herr_t status, std::string_view what) {
  if (status < 0) throw_hdf5_error(what);
  return status;
}

template <herr_t (*Close)(hid_t)> class Handle {
 public:
  Handle() = default;
  // Takes ownership of `id`, the result of the HDF5 call described by `what`; throws if negative.
  Handle(hid_t id, std::string_view what) : id_(id) {
    if (id_ < 0) throw_hdf5_error(what);
  }
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      close();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { close(); }

  hid_t get() const noexcept { return id_; }
  operator hid_t() const noexcept { return id_; }  // NOLINT(google-explicit-constructor): C API
  bool valid() const noexcept { return id_ >= 0; }

  // Closes, ignoring failure (destructors, error paths).
  void close() noexcept {
    if (id_ >= 0 && Close(id_) < 0) H5Eclear2(H5E_DEFAULT);
    id_ = H5I_INVALID_HID;
  }
  // Closes and throws on failure: closing a file flushes it, which is where I/O errors surface.
  void close_checked(std::string_view what) {
    const hid_t id = std::exchange(id_, H5I_INVALID_HID);
    if (id >= 0) check(Close(id), what);
  }
  // Gives up the identifier without closing it. For collective objects on an error path where
  // the other ranks may never close them too: a lone collective close would wait forever.
  void release() noexcept { id_ = H5I_INVALID_HID; }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

using File = Handle<H5Fclose>;
using Group = Handle<H5Gclose>;
using Dataset = Handle<H5Dclose>;
using Dataspace = Handle<H5Sclose>;
using Datatype = Handle<H5Tclose>;
using PropertyList = Handle<H5Pclose>;
using Attribute = Handle<H5Aclose>;
using Object = Handle<H5Oclose>;  // any object opened by H5Oopen (a group or a dataset)

// A scalar dataspace, and a simple one of the given extent (rank = dims.size()).
Dataspace scalar_space();
Dataspace simple_space(std::initializer_list<hsize_t> dims, std::string_view what);

// A fixed-length, NUL-padded UTF-8 string type of `size` bytes (at least 1): what h5py and
// pandas read as bytes, without variable-length machinery.
Datatype fixed_string_type(std::size_t size);

// A new property list of `cls` (H5P_FILE_ACCESS, H5P_GROUP_CREATE, ...).
PropertyList property_list(hid_t cls, std::string_view what);

// The name of the object `id` in its file ("/runs/run0"), for messages; "?" when unknown.
std::string object_name(hid_t id);

}  // namespace embscale::report
