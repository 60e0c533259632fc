#include "hearth/core/storage.h"

#include <atomic>

#include "hearth/core/device_runtime.h"
#include "hearth/core/errors.h"
#include "hearth/core/exception_report.h"
#include "hearth/core/oom_injection.h"

namespace hearth {

Storage::Storage(void* data, size_t nbytes, Device device, Deleter deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {}

Storage::~Storage() {
  if (deleter_ && data_) deleter_(data_);
}

namespace {
// Allocations left before the injected failure; -1 when none is armed.
std::atomic<int64_t> g_allocations_before_oom{-1};

void maybe_inject_oom(size_t nbytes, Device device) {
  if (g_allocations_before_oom.load(std::memory_order_relaxed) < 0) return;
  if (g_allocations_before_oom.fetch_sub(1) != 0) return;
  HEARTH_THROW(OutOfMemoryError, "[", device.str(), "] out of memory: could not allocate ", nbytes,
               " bytes (injected by inject_oom_after_allocations)");
}
}  // namespace

void inject_oom_after_allocations(int64_t n) { g_allocations_before_oom.store(n < 0 ? -1 : n); }
bool oom_injection_armed() { return g_allocations_before_oom.load() >= 0; }

std::shared_ptr<Storage> Storage::allocate(size_t nbytes, Device device) {
  maybe_inject_oom(nbytes, device);
  // Kept only while the allocation runs: a std::bad_alloc from it says its size.
  note_allocation_request(nbytes);
  DeviceRuntime& rt = device_runtime(device.kind);
  void* p = rt.allocate(nbytes, device.index);
  note_allocation_request(0);
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
