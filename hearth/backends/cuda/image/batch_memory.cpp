#include "hearth/backends/cuda/image/batch_memory.h"

#include "hearth/backends/cuda/context.h"
#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/image/block_cache.h"
#include "hearth/core/device.h"

namespace hearth::cuda {

std::shared_ptr<BatchMemory> BatchMemory::create(int device) {
  return std::shared_ptr<BatchMemory>(new BatchMemory(device));
}

std::shared_ptr<Storage> BatchMemory::take(size_t nbytes, cudaStream_t stream) {
  Block block;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(nbytes);
    if (it != free_.end()) {
      block = it->second;
      free_.erase(it);
    }
  }
  if (block.ptr == nullptr) {
    block.ptr = take_block(BlockKind::device, nbytes);
    HEARTH_CHECK(block.ptr != nullptr, OutOfMemoryError, "[cuda] out of memory: the image decoder could not allocate ",
                 nbytes, " bytes for a batch on cuda:", device_, " (use a smaller batch, or HEARTH_IMAGE_DECODER=cpu)");
    block.nbytes = nbytes;
    HEARTH_CUDA_CHECK(cudaEventCreateWithFlags(&block.released, cudaEventDisableTiming));
  } else {
    // The work that read it on the training stream comes first.
    HEARTH_CUDA_CHECK(cudaStreamWaitEvent(stream, block.released, 0));
  }
  std::weak_ptr<BatchMemory> self = weak_from_this();
  return std::make_shared<Storage>(block.ptr, nbytes, Device(register_device_kind("cuda"), device_),
                                   [self, block](void*) {
                                     if (auto pool = self.lock()) pool->give_back(block);
                                     // A pool gone (the decoder destroyed at exit): the
                                     // memory stays with the process, as block_cache.h says.
                                   });
}

void BatchMemory::give_back(Block block) {
  bool ok = false;
  try {
    // The device's stream: the training step's reads of the batch are queued there.
    cudaStream_t training = stream(device_);
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    ok = cudaStreamIsCapturing(training, &capturing) == cudaSuccess && capturing == cudaStreamCaptureStatusNone &&
         cudaEventRecord(block.released, training) == cudaSuccess;
  } catch (...) {
    ok = false;  // a deleter must not throw: the block is simply not reused
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (ok) {
    free_.emplace(block.nbytes, block);
  } else {
    (void)cudaGetLastError();
    retired_.push_back(block);
  }
}

}  // namespace hearth::cuda
