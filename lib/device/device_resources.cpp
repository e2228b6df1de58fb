#include "device/device_resources.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace embscale::device {
namespace {

void* created(const DeviceLibrary& library, int (*create)(void**), const char* what) {
  void* handle = nullptr;
  library.check(create(&handle), what);
  return handle;
}

void* allocated(const DeviceLibrary& library, std::int64_t bytes) {
  EMBSCALE_EXPECTS(bytes >= 0, "a device allocation of a non-negative size");
  void* pointer = nullptr;
  library.check(library.functions().malloc(bytes, &pointer),
                ("allocating " + std::to_string(bytes) + " bytes of device memory").c_str());
  return pointer;
}

}  // namespace

Stream::Stream(const DeviceLibrary& library)
    : owned_(library, created(library, library.functions().stream_create, "creating a device stream")) {}

void Stream::synchronize() const {
  owned_.library().check(owned_.library().functions().stream_synchronize(handle()), "synchronizing a device stream");
}

Event::Event(const DeviceLibrary& library)
    : owned_(library, created(library, library.functions().event_create, "creating a device event")) {}

void Event::record(void* stream) {
  owned_.library().check(owned_.library().functions().event_record(handle(), stream), "recording a device event");
}

void Event::synchronize() const {
  owned_.library().check(owned_.library().functions().event_synchronize(handle()), "waiting for a device event");
}

bool Event::done() const {
  int done = 0;
  owned_.library().check(owned_.library().functions().event_query(owned_.get(), &done), "event_query");
  return done != 0;
}

double Event::seconds_since(const Event& start) const {
  float ms = 0;
  owned_.library().check(owned_.library().functions().event_elapsed_ms(start.handle(), handle(), &ms),
                         "timing between device events");
  return 1e-3 * static_cast<double>(ms);
}

DeviceBuffer::DeviceBuffer(const DeviceLibrary& library, std::int64_t bytes)
    : owned_(library, allocated(library, bytes)), bytes_(bytes) {}

void DeviceBuffer::copy_from_host(const void* source, std::int64_t bytes, void* stream) {
  EMBSCALE_EXPECTS(bytes >= 0 && bytes <= bytes_, "a copy within the device buffer");
  owned_.library().check(owned_.library().functions().copy_async(data(), source, bytes, stream),
                         "copying host memory to the device");
}

void DeviceBuffer::copy_to_host(void* destination, std::int64_t bytes, void* stream) const {
  EMBSCALE_EXPECTS(bytes >= 0 && bytes <= bytes_, "a copy within the device buffer");
  owned_.library().check(owned_.library().functions().copy_async(destination, data(), bytes, stream),
                         "copying device memory to the host");
}

void* GrowingDeviceBuffer::reserve(std::int64_t bytes) {
  EMBSCALE_EXPECTS(bytes >= 0, "a buffer of no negative size");
  if (!buffer_ || buffer_->bytes() < bytes) {
    buffer_.reset();  // the old allocation first: the peak is the new size, not both
    // Some headroom, so a batch slightly larger than the last does not reallocate.
    buffer_.emplace(library_, std::max<std::int64_t>(bytes + bytes / 8, 256));
  }
  return buffer_->data();
}

void GrowingDeviceBuffer::copy_in(void* at, const void* source, std::int64_t bytes, void* stream) {
  library_.check(library_.functions().copy_async(at, source, bytes, stream), "copying host memory to the device");
}

}  // namespace embscale::device
