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
// Returns a block from take_block to the cache: no work may be pending on it.
void give_block(BlockKind kind, void* ptr);

// For blocks freed by a library (nvJPEG) in the middle of work it queued on
// the calling thread's stream, as cudaFree allows (it waits for the device):
// the block is held by this thread until release_blocks_held(), which the
// caller calls once that stream has finished.
void give_block_after_sync(BlockKind kind, void* ptr);
void release_blocks_held();

}  // namespace hearth::cuda
