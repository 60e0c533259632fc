// One usable Vulkan device, opened on first use: its logical device and its
// one compute queue, the memory pool for tensors, the command stream kernels
// record into and the pipelines they run. Everything that records or
// allocates holds `mutex`.
#pragma once

#include <volk.h>

#include <memory>
#include <mutex>

#include "hearth/backends/vulkan/command_stream.h"
#include "hearth/backends/vulkan/instance.h"
#include "hearth/backends/vulkan/memory.h"
#include "hearth/backends/vulkan/pipelines.h"

namespace hearth::vulkan {

struct DeviceContext {
  int index = 0;
  const PhysicalDevice* phys = nullptr;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  bool unified = false;              // tensors live in host-mapped memory (memory.h)
  uint32_t device_memory_type = 0;   // tensors
  uint32_t host_memory_type = 0;     // staging and parameters
  VkDeviceSize heap_size = 0;        // of the tensors' memory heap
  VkDeviceSize bind_alignment = 16;  // a storage buffer binding's offset is a multiple of this
  VkDeviceSize max_range = 0;        // the most bytes one binding may span
  std::recursive_mutex mutex;
  std::unique_ptr<DeviceMemoryPool> memory;
  std::unique_ptr<CommandStream> stream;
  std::unique_ptr<PipelineLibrary> pipelines;
  HostBuffer dummy;  // bound where a kernel's optional tensor is absent
};

// Throws DeviceError when `index` is not a usable device.
DeviceContext& device_context(int index);

}  // namespace hearth::vulkan
