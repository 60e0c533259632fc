// The Vulkan instance (created once, on the first question) and the physical
// devices hearth can run on: those with a compute queue, Vulkan 1.2, 64-bit
// integers and 8-bit storage in shaders. With HEARTH_VULKAN_VALIDATION=1 the
// instance carries Khronos' validation layer and a messenger that counts and
// prints the errors it reports.
#pragma once

#include <volk.h>

#include <cstddef>
#include <string>
#include <vector>

#include "hearth/backends/vulkan/diagnosis.h"

namespace hearth::vulkan {

struct PhysicalDevice {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceSubgroupProperties subgroup{};
  VkPhysicalDeviceDriverProperties driver{};
  VkPhysicalDeviceMemoryProperties memory{};
  uint32_t compute_queue_family = 0;
  bool has_portability_subset = false;  // MoltenVK: VK_KHR_portability_subset must be enabled
  bool float64 = false;                 // shaderFloat64: float64 tensors can be computed on
  // shaderFloat16 and storageBuffer16BitAccess: float16 and bfloat16 tensors can be stored and computed on.
  bool float16 = false;
  bool cooperative_matrix = false;  // VK_KHR_cooperative_matrix is offered (not used by the kernels yet)
};

struct Instance {
  VkInstance handle = VK_NULL_HANDLE;
  std::vector<PhysicalDevice> devices;  // usable ones, GPUs first (instance.cpp)
  VulkanProbe probe;                    // why `devices` is empty
  bool validation = false;
  uint32_t loader_version = 0;
};

// Never throws: a machine without Vulkan gets an Instance with no devices and
// the probe saying why.
const Instance& instance();

// Errors the validation layer reported since start-up (0 without validation).
size_t validation_error_count();

}  // namespace hearth::vulkan
