#include "hearth/backends/vulkan/memory.h"

#include <algorithm>

#include <sys/mman.h>

#include "hearth/backends/vulkan/vk_check.h"

namespace hearth::vulkan {
namespace {

constexpr size_t kSmall = size_t{1} << 20;  // below: 512-byte granules; above: 2 MiB granules
constexpr size_t kAlignment = 256;          // every block starts aligned to this (any dtype, any bind offset)

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }
size_t block_size_for(size_t nbytes) {
  nbytes = std::max<size_t>(nbytes, 1);
  return nbytes < kSmall ? round_up(nbytes, 512) : round_up(nbytes, size_t{2} << 20);
}

}  // namespace

HostBuffer create_host_buffer(VkDevice device, uint32_t memory_type, size_t size) {
  HostBuffer b;
  b.size = size;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  HEARTH_VK_CHECK(vkCreateBuffer(device, &bi, nullptr, &b.buffer));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, b.buffer, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = memory_type;
  const VkResult r = vkAllocateMemory(device, &ai, nullptr, &b.memory);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(device, b.buffer, nullptr);
    HEARTH_THROW(OutOfMemoryError, "[vulkan] could not allocate a host-visible buffer of ", size, " bytes (",
                 result_name(r), ")");
  }
  HEARTH_VK_CHECK(vkBindBufferMemory(device, b.buffer, b.memory, 0));
  HEARTH_VK_CHECK(vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
  return b;
}

void destroy_host_buffer(VkDevice device, HostBuffer& b) {
  if (b.buffer) vkDestroyBuffer(device, b.buffer, nullptr);
  if (b.memory) vkFreeMemory(device, b.memory, nullptr);  // unmaps
  b = HostBuffer{};
}

DeviceMemoryPool::DeviceMemoryPool(VkDevice device, uint32_t memory_type, bool unified, VkDeviceSize heap_size,
                                   std::function<void()> wait_idle)
    : device_(device),
      memory_type_(memory_type),
      unified_(unified),
      heap_size_(heap_size),
      wait_idle_(std::move(wait_idle)) {}

DeviceMemoryPool::~DeviceMemoryPool() {
  // Runs at process exit, after the device may be gone; the driver frees
  // what the process held, so nothing is destroyed here.
}

DeviceMemoryPool::Block* DeviceMemoryPool::create_block(size_t size) {
  auto* b = new Block;
  b->size = size;
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = size;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  if (vkCreateBuffer(device_, &bi, nullptr, &b->buffer) != VK_SUCCESS) {
    delete b;
    return nullptr;
  }
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, b->buffer, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = memory_type_;
  if (vkAllocateMemory(device_, &ai, nullptr, &b->memory) != VK_SUCCESS) {
    vkDestroyBuffer(device_, b->buffer, nullptr);
    delete b;
    return nullptr;
  }
  HEARTH_VK_CHECK(vkBindBufferMemory(device_, b->buffer, b->memory, 0));
  if (unified_) {
    HEARTH_VK_CHECK(vkMapMemory(device_, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped));
    b->address = reinterpret_cast<uintptr_t>(b->mapped);
  } else {
    void* reserved = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    HEARTH_CHECK(reserved != MAP_FAILED, OutOfMemoryError, "[vulkan] could not reserve ", size,
                 " bytes of address space for a device buffer");
    b->address = reinterpret_cast<uintptr_t>(reserved);
  }
  HEARTH_CHECK(b->address % kAlignment == 0, DeviceError,
               "[vulkan] the driver mapped a buffer at an address not aligned to ", kAlignment, " bytes");
  ++stats_.num_device_allocs;
  stats_.reserved += size;
  blocks_[b->address] = b;
  return b;
}

void DeviceMemoryPool::destroy_block(Block* b) {
  blocks_.erase(b->address);
  if (!unified_) munmap(reinterpret_cast<void*>(b->address), b->size);
  vkDestroyBuffer(device_, b->buffer, nullptr);
  vkFreeMemory(device_, b->memory, nullptr);
  stats_.reserved -= b->size;
  delete b;
}

void* DeviceMemoryPool::allocate(size_t nbytes) {
  const size_t size = block_size_for(nbytes);
  std::unique_lock<std::mutex> lock(mutex_);
  if (stats_.limit && stats_.active + size > stats_.limit) {
    ++stats_.num_ooms;
    HEARTH_THROW(OutOfMemoryError, "[vulkan] allocating ", nbytes, " bytes would exceed the memory limit of ",
                 stats_.limit, " bytes (", stats_.active, " in use)");
  }
  // The smallest cached block that fits and wastes at most a quarter of itself.
  Block* b = nullptr;
  auto it = free_blocks_.lower_bound(size);
  if (it != free_blocks_.end() && it->first - size <= it->first / 4) {
    b = it->second;
    free_blocks_.erase(it);
  }
  if (!b) b = create_block(size);
  if (!b && !free_blocks_.empty()) {
    // Give the cache back to the device and try once more.
    lock.unlock();
    wait_idle_();
    lock.lock();
    release_cached_locked();
    b = create_block(size);
  }
  if (!b) {
    ++stats_.num_ooms;
    HEARTH_THROW(OutOfMemoryError, "[vulkan] out of device memory allocating ", nbytes, " bytes (", stats_.active,
                 " bytes in use by tensors, ", stats_.reserved, " reserved, device heap ", heap_size_, ")");
  }
  b->in_use = true;
  stats_.active += b->size;
  stats_.peak_active = std::max(stats_.peak_active, stats_.active);
  return reinterpret_cast<void*>(b->address);
}

// A freed block is reused at once: every later use of it is recorded after the
// work that used it before, on the one queue, with barriers between commands.
void DeviceMemoryPool::deallocate(void* ptr) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == blocks_.end() || !it->second->in_use) return;
  Block* b = it->second;
  b->in_use = false;
  stats_.active -= b->size;
  free_blocks_.emplace(b->size, b);
}

BufferRef DeviceMemoryPool::locate(const void* ptr) const {
  const auto addr = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.upper_bound(addr);
  HEARTH_CHECK(it != blocks_.begin(), DeviceError, "[vulkan] pointer ", ptr, " is not in any Vulkan buffer");
  --it;
  const Block* b = it->second;
  HEARTH_CHECK(addr < b->address + b->size, DeviceError, "[vulkan] pointer ", ptr, " is not in any Vulkan buffer");
  BufferRef ref;
  ref.buffer = b->buffer;
  ref.offset = addr - b->address;
  ref.block_size = b->size;
  ref.mapped = b->mapped ? static_cast<char*>(b->mapped) + ref.offset : nullptr;
  return ref;
}

MemoryStats DeviceMemoryPool::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void DeviceMemoryPool::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_active = stats_.active;
}

void DeviceMemoryPool::release_cached_locked() {
  for (auto& [size, b] : free_blocks_) destroy_block(b);
  free_blocks_.clear();
}

void DeviceMemoryPool::empty_cache() {
  wait_idle_();
  std::lock_guard<std::mutex> lock(mutex_);
  release_cached_locked();
}

void DeviceMemoryPool::set_limit(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.limit = bytes;
}

}  // namespace hearth::vulkan
