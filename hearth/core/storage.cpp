#include "hearth/core/storage.h"

#include "hearth/core/device_runtime.h"

namespace hearth {

Storage::Storage(void* data, size_t nbytes, Device device, Deleter deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {}

Storage::~Storage() {
  if (deleter_ && data_) deleter_(data_);
}

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device) {
  DeviceRuntime& rt = device_runtime(device.kind);
  void* p = rt.allocate(nbytes, device.index);
  int index = device.index;
  return std::make_shared<Storage>(p, nbytes, device, [&rt, index](void* ptr) { rt.deallocate(ptr, index); });
}

std::shared_ptr<Storage> Storage::allocate_pinned(size_t nbytes) {
  DeviceRuntime* rt = pinned_memory_runtime();
  void* p = rt && nbytes > 0 ? rt->allocate_pinned_host(nbytes) : nullptr;
  if (!p) return allocate(nbytes, Device());
  auto s = std::make_shared<Storage>(p, nbytes, Device(), [rt](void* ptr) { rt->free_pinned_host(ptr); });
  s->pinned_ = true;
  return s;
}

}  // namespace hearth
