// Bytes on one device, shared by every view of them. The version counter lives
// here because in-place writes through any view invalidate all views' saved copies.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>

#include "hearth/core/device.h"

namespace hearth {

class Storage {
 public:
  using Deleter = std::function<void(void*)>;
  // Takes ownership of `data`, released by `deleter` (may be empty for borrowed memory).
  Storage(void* data, size_t nbytes, Device device, Deleter deleter);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // Memory from the device's runtime.
  static std::shared_ptr<Storage> allocate(size_t nbytes, Device device);
  // Page-locked host memory (a CPU storage) from pinned_memory_runtime(), or
  // ordinary CPU memory where no runtime gives pinned memory.
  static std::shared_ptr<Storage> allocate_pinned(size_t nbytes);

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  const Device& device() const { return device_; }
  bool is_pinned() const { return pinned_; }

  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  Deleter deleter_;
  bool pinned_ = false;
  std::atomic<uint32_t> version_{0};
};

}  // namespace hearth
