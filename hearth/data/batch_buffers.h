// Memory for the batches a DataLoader's workers collate, reused from batch to
// batch.
//
// A batch of images is large (128 x 3 x 224 x 224 float32 is 77 MB). Taken
// fresh from the C library, a block that size is mapped from the kernel, each
// of its pages faults in as collation first writes it, and freeing it unmaps
// it again, on the training loop's thread; page faults and unmapping take a
// lock of the whole process, which every worker thread then waits on. Reused,
// the block is written at memory speed. A block returns to the pool when the
// last tensor using it is dropped (views of a batch keep it), so a batch is
// never overwritten while it is in use.
//
// Pinned batches (pin_memory) are not pooled here: they are collated straight
// into page-locked memory from Storage::allocate_pinned, whose own cache knows
// when a copy to the device still reads a block.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "hearth/core/storage.h"
#include "hearth/core/tensor.h"

namespace hearth::data {

class BatchBufferPool : public std::enable_shared_from_this<BatchBufferPool> {
 public:
  // Keeps at most `max_free` unused blocks (the rest are freed).
  static std::shared_ptr<BatchBufferPool> create(size_t max_free);

  // An uninitialised contiguous CPU tensor in a reused block of exactly its
  // size when one is free, else in a new one.
  Tensor empty(const Shape& shape, DType dtype);

  // Blocks taken from the C library so far (tests: reuse keeps this flat).
  size_t blocks_allocated() const;

 private:
  explicit BatchBufferPool(size_t max_free) : max_free_(max_free) {}
  void give_back(std::shared_ptr<Storage> block);

  const size_t max_free_;
  mutable std::mutex mu_;
  std::multimap<size_t, std::shared_ptr<Storage>> free_;  // by size in bytes
  size_t allocated_ = 0;
};

}  // namespace hearth::data
