// What a backend provides below the kernels: memory, copies to and from the
// host, synchronisation and discovery. One runtime per device kind; the CPU's is
// built in, accelerators register theirs from their own backend folder.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "hearth/core/device.h"

namespace hearth {

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;

  // Discovery. A runtime can be registered yet unavailable (built without the
  // toolkit, no driver, no device): unavailable_reason() then says why and what to do.
  virtual bool is_available() const = 0;
  virtual std::string unavailable_reason() const { return {}; }
  virtual int device_count() const = 0;
  virtual std::string device_name(int index) const = 0;
  // For device=auto: the available kind with the highest priority wins (cpu is 0).
  virtual int auto_priority() const { return 0; }

  // Memory. allocate never returns null: it throws OutOfMemoryError.
  virtual void* allocate(size_t nbytes, int index) = 0;
  virtual void deallocate(void* ptr, int index) = 0;

  // Copies of contiguous bytes. They are ordered with the device's kernels;
  // copy_to_host returns when the bytes are on the host.
  virtual void copy_from_host(void* dst, const void* src, size_t nbytes, int index) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t nbytes, int index) = 0;
  virtual void copy_within(void* dst, const void* src, size_t nbytes, int index) = 0;
  virtual void synchronize(int /*index*/) {}
};

void register_device_runtime(DeviceKind kind, std::unique_ptr<DeviceRuntime> runtime);
bool has_device_runtime(DeviceKind kind);
// Throws DeviceError naming the kind if no runtime is registered.
DeviceRuntime& device_runtime(DeviceKind kind);

// Throws DeviceError with the runtime's reason if the device cannot be used
// (unavailable kind, index out of range).
void check_device_usable(const Device& device);

// "auto" -> the best available accelerator, else cpu. Any other spec is parsed
// and checked usable, so asking for an absent accelerator fails loudly.
Device resolve_device(const std::string& spec);

}  // namespace hearth
