// Owners of the device seam's opaque handles (device/device_abi.h): a stream, a timing event and a
// device allocation, each created through a loaded DeviceLibrary and destroyed with its owner.
// Move-only. Failures become embscale::Error (DeviceLibrary::check) except in destructors, which
// never throw: a destroy that fails there leaves a handle to the process's end, nothing worse.
#pragma once

#include <cstdint>
#include <utility>

#include "device/device_library.hpp"

namespace embscale::device {

namespace detail {
// One handle and the library that made it; `destroy` is the core function that ends it.
template <int (*DeviceFunctions::*Destroy)(void*)> class OwnedHandle {
 public:
  OwnedHandle(const DeviceLibrary& library, void* handle) : library_(library), handle_(handle) {}
  OwnedHandle(OwnedHandle&& other) noexcept
      : library_(other.library_), handle_(std::exchange(other.handle_, nullptr)) {}
  OwnedHandle& operator=(OwnedHandle&& other) noexcept {
    if (this != &other) {
      reset();
      library_ = other.library_;
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  OwnedHandle(const OwnedHandle&) = delete;
  OwnedHandle& operator=(const OwnedHandle&) = delete;
  ~OwnedHandle() { reset(); }

  void* get() const noexcept { return handle_; }
  const DeviceLibrary& library() const noexcept { return library_; }

 private:
  void reset() noexcept {
    if (handle_ != nullptr) (void)(library_.functions().*Destroy)(handle_);
    handle_ = nullptr;
  }
  DeviceLibrary library_;  // a copy: cheap, and never dangling (loaded libraries stay loaded)
  void* handle_;
};
}  // namespace detail

// A non-blocking stream on the current device.
class Stream {
 public:
  explicit Stream(const DeviceLibrary& library);
  void* handle() const noexcept { return owned_.get(); }
  void synchronize() const;

 private:
  detail::OwnedHandle<&DeviceFunctions::stream_destroy> owned_;
};

// A timing event.
class Event {
 public:
  explicit Event(const DeviceLibrary& library);
  void* handle() const noexcept { return owned_.get(); }
  // Completes when the work queued on `stream` (a stream handle, null: the default) before it has.
  void record(void* stream);
  void synchronize() const;
  // Whether the work before its record has completed (or it was never recorded); does not wait.
  bool done() const;
  // Seconds from `start` to this event, both recorded and completed.
  double seconds_since(const Event& start) const;

 private:
  detail::OwnedHandle<&DeviceFunctions::event_destroy> owned_;
};

// `bytes` of memory on the current device.
class DeviceBuffer {
 public:
  DeviceBuffer(const DeviceLibrary& library, std::int64_t bytes);
  void* data() const noexcept { return owned_.get(); }
  std::int64_t bytes() const noexcept { return bytes_; }
  // Queue copies on `stream` between this buffer (from its start) and host memory; `bytes` at most
  // the buffer's. Into host memory the bytes are there once the stream is synchronized.
  void copy_from_host(const void* source, std::int64_t bytes, void* stream);
  void copy_to_host(void* destination, std::int64_t bytes, void* stream) const;

 private:
  detail::OwnedHandle<&DeviceFunctions::free> owned_;
  std::int64_t bytes_;
};

}  // namespace embscale::device
