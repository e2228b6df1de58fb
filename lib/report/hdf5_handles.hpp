// RAII over HDF5's C API (Debian ships no parallel C++ wrapper). An Hid owns one identifier and
// closes it with the matching H5?close; check() turns HDF5's negative returns into
// embscale::Error naming the call and the object. HDF5's own error-stack printing is silenced
// once (silence_hdf5_errors) so that users see our messages, not HDF5's traces.
#pragma once

#include <hdf5.h>

#include <string>
#include <utility>

namespace embscale::report {

void silence_hdf5_errors();

// Throws embscale::Error("<what>: HDF5 call failed") when status < 0; returns status.
herr_t check(herr_t status, const std::string& what);
hid_t check_id(hid_t id, const std::string& what);

class Hid {
 public:
  using Closer = herr_t (*)(hid_t);
  Hid() = default;
  Hid(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Hid(Hid&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Hid& operator=(Hid&& other) noexcept {
    if (this != &other) {
      close();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      closer_ = other.closer_;
    }
    return *this;
  }
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  ~Hid() { close(); }

  hid_t get() const noexcept { return id_; }
  operator hid_t() const noexcept { return id_; }  // NOLINT: pass straight to the C API
  void close() noexcept {
    if (id_ >= 0 && closer_) closer_(id_);
    id_ = H5I_INVALID_HID;
  }
  // Gives up ownership without closing: for a collective object on a path where other ranks
  // may not close it too (closing alone would block forever).
  void release() noexcept { id_ = H5I_INVALID_HID; }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

inline Hid file_handle(hid_t id, const std::string& what) { return {check_id(id, what), H5Fclose}; }
inline Hid group_handle(hid_t id, const std::string& what) { return {check_id(id, what), H5Gclose}; }
inline Hid dataset_handle(hid_t id, const std::string& what) { return {check_id(id, what), H5Dclose}; }
inline Hid space_handle(hid_t id, const std::string& what) { return {check_id(id, what), H5Sclose}; }
inline Hid type_handle(hid_t id, const std::string& what) { return {check_id(id, what), H5Tclose}; }
inline Hid plist_handle(hid_t id, const std::string& what) { return {check_id(id, what), H5Pclose}; }
inline Hid attribute_handle(hid_t id, const std::string& what) { return {check_id(id, what), H5Aclose}; }

// A fixed-length, NUL-padded C string type of `size` bytes (at least 1).
Hid fixed_string_type(std::size_t size);

}  // namespace embscale::report
