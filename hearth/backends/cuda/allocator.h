// Device memory for tensors: stream-ordered cudaMallocAsync on the device's
// default pool, with a release threshold so freed blocks stay in the pool and a
// steady training step makes no new device allocations. Keeps active / peak /
// reserved statistics, honours HEARTH_CUDA_MEMORY_FRACTION, and on failure
// trims the pool and retries once before an OutOfMemoryError that says what
// was asked, what is in use and free, and what to change.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hearth/core/device_runtime.h"

namespace hearth::cuda {

void* allocate(size_t nbytes, int device);
void deallocate(void* ptr, int device);
MemoryStats memory_stats(int device);
void reset_peak_memory_stats(int device);
void empty_cache(int device);

// Watching a step before it is recorded as a graph: the allocations it frees
// that were made before it (a tensor replaced instead of updated in place), and
// the ones it makes that are still live when it ends (state kept from it).
// Either makes a recorded step differ from the same step run eagerly.
struct StepMemoryReport {
  size_t freed_from_before = 0;
  size_t outliving = 0;
  size_t outliving_bytes = 0;
};
void begin_step_watch(int device);
// While a step is recorded, its allocations become nodes of the graph, and the
// pool's statistics are not queried (the query is not allowed during capture).
void set_recording(int device, bool recording);
StepMemoryReport end_step_watch(int device);

}  // namespace hearth::cuda
