// Owners of the device seam's opaque handles (device/device_abi.h): a stream, a timing event and a
// device allocation, each created through a loaded DeviceLibrary and destroyed with its owner.
// Move-only. Failures become embscale::Error (DeviceLibrary::check) except in destructors, which
// never throw: a destroy that fails there leaves a handle to the process's end, nothing worse.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
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

// Device memory for a buffer whose size follows a batch's: reserve() keeps the allocation while it
// is large enough and replaces it (contents lost) when a call needs more, so steps of a steady
// size allocate nothing after the first. Empty until the first reserve().
class GrowingDeviceBuffer {
 public:
  explicit GrowingDeviceBuffer(const DeviceLibrary& library) : library_(library) {}
  // At least `bytes` of device memory (a valid pointer even for 0 bytes).
  void* reserve(std::int64_t bytes);
  template <class T> T* reserve_for(std::size_t count) {
    return static_cast<T*>(reserve(static_cast<std::int64_t>(count * sizeof(T))));
  }
  // Reserves room for `values` and queues their copy from host memory on `stream`.
  template <class T> T* assign(std::span<const T> values, void* stream) {
    T* at = reserve_for<T>(values.size());
    if (!values.empty()) copy_in(at, values.data(), static_cast<std::int64_t>(values.size_bytes()), stream);
    return at;
  }
  void* data() const noexcept { return buffer_ ? buffer_->data() : nullptr; }
  std::int64_t bytes() const noexcept { return buffer_ ? buffer_->bytes() : 0; }

 private:
  void copy_in(void* at, const void* source, std::int64_t bytes, void* stream);

  DeviceLibrary library_;
  std::optional<DeviceBuffer> buffer_;
};

}  // namespace embscale::device
