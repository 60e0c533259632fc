#include "hearth/backends/cuda/index_guard.cuh"

#include <cuda_runtime.h>

#include <cstring>
#include <mutex>

#include "hearth/backends/cuda/context.h"
#include "hearth/backends/cuda/cuda_check.h"

namespace hearth::cuda {
namespace {

constexpr int kMaxDevices = 64;

// One pinned, mapped block holds every device's slot; under unified addressing
// the host pointer is valid in kernels on every device.
IndexErrorSlot* slots() {
  static IndexErrorSlot* base = [] {
    void* p = nullptr;
    HEARTH_CUDA_CHECK(cudaHostAlloc(&p, sizeof(IndexErrorSlot) * kMaxDevices,
                                    cudaHostAllocMapped | cudaHostAllocPortable));
    std::memset(p, 0, sizeof(IndexErrorSlot) * kMaxDevices);
    void* dev = nullptr;
    HEARTH_CUDA_CHECK(cudaHostGetDevicePointer(&dev, p, 0));
    HEARTH_CHECK(dev == p, DeviceError, "[cuda] mapped host memory has a different device address; "
                 "unified addressing is required");
    return static_cast<IndexErrorSlot*>(p);
  }();
  return base;
}

const char* op_name(int32_t op) {
  switch (static_cast<IndexOp>(op)) {
    case IndexOp::index_select: return "index_select";
    case IndexOp::gather: return "gather";
    case IndexOp::scatter_add: return "scatter_add";
  }
  return "an indexing op";
}

}  // namespace

IndexErrorSlot* index_error_slot(int device) {
  HEARTH_CHECK(device >= 0 && device < kMaxDevices, DeviceError, "[cuda] device index ", device, " out of range");
  return slots() + device;
}

void raise_recorded_index_error(int device, const char* op) {
  volatile IndexErrorSlot* s = index_error_slot(device);
  if (!s->set) return;
  const int64_t value = s->value, size = s->size;
  const int32_t dim = s->dim, by = s->op;
  s->set = 0;
  HEARTH_THROW(ValueError, "[", op, "] an earlier ", op_name(by), " on cuda:", device, " met index ", value,
               ", which is out of bounds for dimension ", dim, " with size ", size,
               "; the kernel skipped it (reads gave NaN or 0, additions were dropped). Set HEARTH_CHECK_INDICES=1 "
               "to check indices on the host and raise at the call that passes them.");
}

}  // namespace hearth::cuda
