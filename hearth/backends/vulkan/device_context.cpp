#include "hearth/backends/vulkan/device_context.h"

#include <algorithm>
#include <array>
#include <vector>

#include "hearth/backends/vulkan/vk_check.h"
#include "hearth/backends/vulkan/vulkan_switches.h"

namespace hearth::vulkan {
namespace {

uint32_t buffer_memory_bits(VkDevice device) {
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = 4096;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  VkBuffer probe = VK_NULL_HANDLE;
  HEARTH_VK_CHECK(vkCreateBuffer(device, &bi, nullptr, &probe));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, probe, &req);
  vkDestroyBuffer(device, probe, nullptr);
  return req.memoryTypeBits;
}

// The first allowed type with all of `want`, or -1.
int find_type(const VkPhysicalDeviceMemoryProperties& mem, uint32_t allowed, VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i)
    if ((allowed & (1u << i)) && (mem.memoryTypes[i].propertyFlags & want) == want) return static_cast<int>(i);
  return -1;
}

// Tensors go to the largest device-local heap. If the host can map a type of
// that heap, memory is unified (lavapipe, Apple, integrated GPUs; a discrete
// GPU's small host-visible window is a separate, smaller heap and is not taken).
void choose_memory(DeviceContext& ctx) {
  const VkPhysicalDeviceMemoryProperties& mem = ctx.phys->memory;
  const uint32_t allowed = buffer_memory_bits(ctx.device);
  int largest_heap = -1;
  for (uint32_t h = 0; h < mem.memoryHeapCount; ++h)
    if ((mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
        (largest_heap < 0 || mem.memoryHeaps[h].size > mem.memoryHeaps[largest_heap].size))
      largest_heap = static_cast<int>(h);
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int device_type = -1;
  for (uint32_t i = 0; i < mem.memoryTypeCount && device_type < 0; ++i) {
    const auto& t = mem.memoryTypes[i];
    if ((allowed & (1u << i)) && static_cast<int>(t.heapIndex) == largest_heap &&
        (t.propertyFlags & (VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host)) ==
            (VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | host))
      device_type = static_cast<int>(i);
  }
  ctx.unified = device_type >= 0 && !staged_memory_forced();
  if (device_type < 0) device_type = find_type(mem, allowed, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (device_type < 0) device_type = find_type(mem, allowed, 0);
  int host_type = find_type(mem, allowed, host | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  if (host_type < 0) host_type = find_type(mem, allowed, host);
  HEARTH_CHECK(device_type >= 0 && host_type >= 0, DeviceError, "[vulkan] ", ctx.phys->props.deviceName,
               " offers no memory type for storage buffers that the host can reach");
  ctx.device_memory_type = static_cast<uint32_t>(device_type);
  ctx.host_memory_type = static_cast<uint32_t>(host_type);
  ctx.heap_size = mem.memoryHeaps[mem.memoryTypes[device_type].heapIndex].size;
}

std::unique_ptr<DeviceContext> open_device(int index) {
  const Instance& inst = instance();
  HEARTH_CHECK(index >= 0 && index < static_cast<int>(inst.devices.size()), DeviceError, "[vulkan] device index ",
               index, " is out of range: ", inst.devices.size(), " Vulkan device(s) usable",
               inst.devices.empty() ? " (" + describe_vulkan_problem(inst.probe) + ")" : std::string());
  auto ctx = std::make_unique<DeviceContext>();
  ctx->index = index;
  ctx->phys = &inst.devices[index];
  const PhysicalDevice& phys = *ctx->phys;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = phys.compute_queue_family;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  f11.storageBuffer16BitAccess = phys.float16 ? VK_TRUE : VK_FALSE;
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f11};
  f12.storageBuffer8BitAccess = VK_TRUE;
  f12.shaderFloat16 = phys.float16 ? VK_TRUE : VK_FALSE;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12, {}};
  f2.features.shaderInt64 = VK_TRUE;
  f2.features.shaderFloat64 = phys.float64 ? VK_TRUE : VK_FALSE;
  std::vector<const char*> extensions;
  if (phys.has_portability_subset) extensions.push_back("VK_KHR_portability_subset");
  VkDeviceCreateInfo ci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  ci.pNext = &f2;
  ci.queueCreateInfoCount = 1;
  ci.pQueueCreateInfos = &qi;
  ci.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  HEARTH_VK_CHECK(vkCreateDevice(phys.handle, &ci, nullptr, &ctx->device));
  vkGetDeviceQueue(ctx->device, phys.compute_queue_family, 0, &ctx->queue);

  choose_memory(*ctx);
  const VkPhysicalDeviceLimits& limits = phys.props.limits;
  // Also a multiple of 16, so an 8-byte element's offset within its binding is whole.
  ctx->bind_alignment = std::max<VkDeviceSize>(limits.minStorageBufferOffsetAlignment, 16);
  ctx->max_range = limits.maxStorageBufferRange;
  DeviceContext* raw = ctx.get();
  ctx->stream = std::make_unique<CommandStream>(ctx->device, ctx->queue, phys.compute_queue_family,
                                                ctx->host_memory_type, ctx->bind_alignment);
  ctx->memory =
      std::make_unique<DeviceMemoryPool>(ctx->device, ctx->device_memory_type, ctx->unified, ctx->heap_size, [raw] {
        std::lock_guard<std::recursive_mutex> lock(raw->mutex);
        raw->stream->finish();
      });
  ctx->pipelines = std::make_unique<PipelineLibrary>(ctx->device, phys);
  ctx->dummy = create_host_buffer(ctx->device, ctx->host_memory_type, 256);
  return ctx;
}

}  // namespace

DeviceContext& device_context(int index) {
  static std::mutex mutex;
  static std::array<std::unique_ptr<DeviceContext>, 16> contexts;
  HEARTH_CHECK(index >= 0 && index < static_cast<int>(contexts.size()), DeviceError, "[vulkan] device index ", index,
               " is out of range");
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = contexts[index];
  if (!slot) slot = open_device(index);
  return *slot;
}

}  // namespace hearth::vulkan
