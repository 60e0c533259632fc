#include "hearth/backends/vulkan/diagnosis.h"

namespace hearth::vulkan {

std::string describe_vulkan_problem(const VulkanProbe& p) {
  switch (p.problem) {
    case VulkanProblem::none:
      return {};
    case VulkanProblem::no_loader:
      return "the Vulkan loader (libvulkan.so.1) could not be opened; install it (Debian/Ubuntu: libvulkan1) "
             "and a driver for the GPU (e.g. mesa-vulkan-drivers)";
    case VulkanProblem::loader_too_old:
      return "the Vulkan loader supports only Vulkan 1.0 and hearth needs 1.2; update it (Debian/Ubuntu: libvulkan1)";
    case VulkanProblem::no_instance:
      return "creating a Vulkan instance failed (" + p.error_text +
             "); the loader found no usable driver: install one (e.g. mesa-vulkan-drivers, or the GPU vendor's)";
    case VulkanProblem::no_device:
      return "the Vulkan loader lists no device: install a Vulkan driver for the GPU (e.g. mesa-vulkan-drivers, "
             "or the GPU vendor's); `vulkaninfo --summary` shows what the loader sees";
    case VulkanProblem::no_compute_queue:
      return "no Vulkan device has a compute queue, which hearth's kernels run on";
    case VulkanProblem::missing_features:
      return "no Vulkan device has what hearth's kernels need: " + p.error_text;
  }
  return "unknown problem";
}

}  // namespace hearth::vulkan
