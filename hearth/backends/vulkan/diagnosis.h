// Why the Vulkan backend cannot be used on this machine, in words that say
// what to do: one cause per case, as the first failing step of the probe
// (instance.cpp) found it.
#pragma once

#include <string>

namespace hearth::vulkan {

enum class VulkanProblem {
  none,
  no_loader,         // volkInitialize failed: libvulkan.so.1 is not installed
  loader_too_old,    // the loader speaks Vulkan 1.0 only
  no_instance,       // vkCreateInstance failed (error_text holds the result)
  no_device,         // the loader found no driver / no physical device
  no_compute_queue,  // devices exist, none has a compute queue
  missing_features,  // devices exist, none has what the kernels need (error_text says what)
};

struct VulkanProbe {
  VulkanProblem problem = VulkanProblem::none;
  std::string error_text;
};

std::string describe_vulkan_problem(const VulkanProbe& probe);

}  // namespace hearth::vulkan
