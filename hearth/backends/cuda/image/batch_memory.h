// Device memory for finished image batches, reused from batch to batch.
//
// A batch is written on a decoder's own stream and read by the training step
// on the device's stream, from another thread. Memory from the device's
// stream-ordered allocator would be ordered on the training stream, which the
// decoder must never wait on as a whole (it would wait for every step queued
// before). So batches get blocks of their own: when the last tensor using a
// block is dropped, an event is recorded on the device's stream, and the
// next batch written into the block first makes its stream wait for that
// event, that is for exactly the work that read the block. A block dropped
// while the device's stream is being recorded into a step graph (no real
// event can be recorded then) is never reused.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "hearth/core/storage.h"

namespace hearth::cuda {

class BatchMemory : public std::enable_shared_from_this<BatchMemory> {
 public:
  static std::shared_ptr<BatchMemory> create(int device);

  // A block of `nbytes` on the device, as a Storage of the cuda kind, safe to
  // write with work queued on `stream` from now on.
  std::shared_ptr<Storage> take(size_t nbytes, cudaStream_t stream);

 private:
  struct Block {
    void* ptr = nullptr;
    size_t nbytes = 0;
    cudaEvent_t released = nullptr;  // recorded when the last user dropped it
  };
  explicit BatchMemory(int device) : device_(device) {}
  void give_back(Block block);

  int device_;
  std::mutex mu_;
  std::multimap<size_t, Block> free_;  // by size
  std::vector<Block> retired_;         // dropped during a recording: never reused
};

}  // namespace hearth::cuda
