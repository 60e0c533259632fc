#include "hearth/data/batch_buffers.h"

#include <utility>

#include "hearth/core/shape.h"

namespace hearth::data {

std::shared_ptr<BatchBufferPool> BatchBufferPool::create(size_t max_free) {
  return std::shared_ptr<BatchBufferPool>(new BatchBufferPool(max_free));
}

Tensor BatchBufferPool::empty(const Shape& shape, DType dtype) {
  const size_t nbytes = static_cast<size_t>(numel_of(shape)) * itemsize(dtype);
  std::shared_ptr<Storage> block;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(nbytes);
    if (it != free_.end()) {
      block = std::move(it->second);
      free_.erase(it);
    }
  }
  if (!block) {
    block = Storage::allocate(nbytes, Device());
    std::lock_guard<std::mutex> lock(mu_);
    ++allocated_;
  }
  // The tensor's storage borrows the block; dropping it hands the block back
  // (or frees it, once the pool is gone).
  void* data = block->data();
  std::weak_ptr<BatchBufferPool> pool = weak_from_this();
  auto lent = std::make_shared<Storage>(data, nbytes, Device(), [pool, block](void*) mutable {
    if (auto p = pool.lock()) p->give_back(std::move(block));
  });
  return Tensor::from_storage(std::move(lent), dtype, shape, contiguous_strides(shape), 0);
}

void BatchBufferPool::give_back(std::shared_ptr<Storage> block) {
  std::lock_guard<std::mutex> lock(mu_);
  if (free_.size() < max_free_) free_.emplace(block->nbytes(), std::move(block));
  // else `block` is freed as it goes out of scope
}

size_t BatchBufferPool::blocks_allocated() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocated_;
}

}  // namespace hearth::data
