// Device memory for tensors: stream-ordered cudaMallocAsync on the device's
// default pool, with a release threshold so freed blocks stay in the pool and a
// steady training step makes no new device allocations. Keeps active / peak /
// reserved statistics, honours HEARTH_CUDA_MEMORY_FRACTION, and on failure
// trims the pool and retries once before an OutOfMemoryError that says what
// was asked, what is in use and free, and what to change.
#pragma once

#include <cstddef>

#include "hearth/core/device_runtime.h"

namespace hearth::cuda {

void* allocate(size_t nbytes, int device);
void deallocate(void* ptr, int device);
MemoryStats memory_stats(int device);
void reset_peak_memory_stats(int device);
void empty_cache(int device);

}  // namespace hearth::cuda
