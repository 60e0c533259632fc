// Page-locked host memory for copies to the GPU without staging (torch's
// pinned memory). Freed blocks are cached by size and reused only once every
// copy that read them has finished: a copy from pinned memory returns before
// the bytes have moved, so the caller may free its tensor at once.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace hearth::cuda {

// Throws OutOfMemoryError naming the size when the host cannot lock more memory.
void* allocate_pinned(size_t nbytes);
void free_pinned(void* ptr);
// After a copy from `src` was queued on `stream`: when `src` lies in a pinned
// block, records an event there (the block is not reused before it) and
// returns true; false for memory this allocator did not give.
bool record_pinned_use(const void* src, cudaStream_t stream);

struct PinnedStats {
  size_t blocks = 0;  // blocks held (in use or cached)
  size_t bytes = 0;   // their total size
  size_t in_use_bytes = 0;
  size_t host_allocs = 0;  // cudaHostAlloc calls so far
};
PinnedStats pinned_stats();

}  // namespace hearth::cuda
