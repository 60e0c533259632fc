// Device and page-locked host memory for the image decoder that is never
// handed back to CUDA while the program runs: a freed block waits in a cache
// for the next request it fits.
//
// cudaFree and cudaFreeHost synchronise the whole device. The decoder runs
// in the loader's worker threads while the training loop queues work, and
// may record a step graph; a device-wide wait there would stall training,
// and during a recording is not allowed. nvJPEG grows its buffers as larger
// images arrive and the decoder's own buffers grow with batches, so both
// allocate through these caches: memory grows to the largest working set
// and stays.
#pragma once

#include <cstddef>

namespace hearth::cuda {

enum class BlockKind { device, pinned_host };

// A block of at least `nbytes` (of the current device, for device memory);
// a cached one when one fits without wasting more than half of it. Null
// when CUDA cannot give the memory.
void* take_block(BlockKind kind, size_t nbytes);
// Returns a block from take_block to the cache.
void give_block(BlockKind kind, void* ptr);

}  // namespace hearth::cuda
