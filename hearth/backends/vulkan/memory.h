// Device memory for tensors: a caching allocator over VkBuffers, each bound to
// its own VkDeviceMemory, and the map from a tensor's data pointer back to
// (buffer, offset) that kernels bind.
//
// What a data pointer is. hearth's core never dereferences the data pointer of
// a tensor that is not on the CPU (copies go through the runtime), so a
// pointer only has to be unique and support arithmetic within its block:
//  - unified memory (device-local memory that the host can map: lavapipe,
//    Apple GPUs through MoltenVK, integrated GPUs): the block's real mapped
//    address. Copies to and from the host are then a memcpy after the device
//    has finished with the memory, with no staging buffer and no copy command.
//  - discrete GPUs: an address range reserved (never committed: PROT_NONE) in
//    the process's address space for each block, so addresses never collide
//    with each other or with host memory, and a stray host dereference faults
//    at once. Copies go through staging buffers (command_stream.h).
// Either way a lookup in an ordered map of blocks by start address gives the
// buffer and the offset of any pointer inside a block.
#pragma once

#include <volk.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

#include "hearth/core/device_runtime.h"

namespace hearth::vulkan {

// A buffer the host writes or reads directly (staging, kernel parameters).
struct HostBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  size_t size = 0;
};
HostBuffer create_host_buffer(VkDevice device, uint32_t memory_type, size_t size);
void destroy_host_buffer(VkDevice device, HostBuffer& b);

// Where a data pointer lives.
struct BufferRef {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;      // of the pointer within the buffer
  VkDeviceSize block_size = 0;  // the whole buffer's size
  void* mapped = nullptr;       // host address of the pointer, unified memory only
};

class DeviceMemoryPool {
 public:
  // `wait_idle` finishes all queued device work (before blocks are destroyed).
  DeviceMemoryPool(VkDevice device, uint32_t memory_type, bool unified, VkDeviceSize heap_size,
                   std::function<void()> wait_idle);
  ~DeviceMemoryPool();
  DeviceMemoryPool(const DeviceMemoryPool&) = delete;
  DeviceMemoryPool& operator=(const DeviceMemoryPool&) = delete;

  void* allocate(size_t nbytes);  // throws OutOfMemoryError
  void deallocate(void* ptr);
  // Throws DeviceError for a pointer this pool did not hand out.
  BufferRef locate(const void* ptr) const;

  MemoryStats stats() const;
  void reset_peak();
  void empty_cache();
  void set_limit(size_t bytes);
  bool unified() const { return unified_; }

 private:
  struct Block {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    size_t size = 0;
    uintptr_t address = 0;
    void* mapped = nullptr;  // unified memory: == address
    bool in_use = false;
  };
  Block* create_block(size_t size);  // nullptr when the device is out of memory
  void destroy_block(Block* b);
  void release_cached_locked();

  VkDevice device_;
  uint32_t memory_type_;
  bool unified_;
  VkDeviceSize heap_size_;
  std::function<void()> wait_idle_;
  mutable std::mutex mutex_;
  std::map<uintptr_t, Block*> blocks_;         // every block, by address
  std::multimap<size_t, Block*> free_blocks_;  // cached blocks, by size
  MemoryStats stats_;
};

}  // namespace hearth::vulkan
