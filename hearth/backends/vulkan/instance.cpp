#include "hearth/backends/vulkan/instance.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "hearth/backends/vulkan/vk_check.h"
#include "hearth/backends/vulkan/vulkan_switches.h"

namespace hearth::vulkan {
namespace {

std::atomic<size_t> g_validation_errors{0};

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT /*types*/,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data, void* /*user*/) {
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    g_validation_errors.fetch_add(1);
    std::fprintf(stderr, "[vulkan] validation error: %s\n", data && data->pMessage ? data->pMessage : "(no text)");
  } else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    std::fprintf(stderr, "[vulkan] validation warning: %s\n", data && data->pMessage ? data->pMessage : "(no text)");
  }
  return VK_FALSE;
}

bool has_extension(const std::vector<VkExtensionProperties>& list, const char* name) {
  for (const auto& e : list)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

bool has_layer(const char* name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

// Fills `dev` and returns "" when the device can run the kernels, else what it lacks.
std::string examine(VkPhysicalDevice handle, PhysicalDevice& dev) {
  dev.handle = handle;
  vkGetPhysicalDeviceProperties(handle, &dev.props);
  if (dev.props.apiVersion < VK_API_VERSION_1_2)
    return std::string(dev.props.deviceName) + " supports Vulkan 1.0/1.1 only (1.2 needed)";
  dev.subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  dev.driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  dev.subgroup.pNext = &dev.driver;
  VkPhysicalDeviceProperties2 props2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &dev.subgroup, {}};
  vkGetPhysicalDeviceProperties2(handle, &props2);
  dev.subgroup.pNext = nullptr;
  dev.driver.pNext = nullptr;
  vkGetPhysicalDeviceMemoryProperties(handle, &dev.memory);

  uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(handle, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> families(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(handle, &nq, families.data());
  // A compute-only family first (on discrete GPUs it does not share the
  // graphics engine), else any family with compute.
  int chosen = -1;
  for (uint32_t i = 0; i < nq && chosen < 0; ++i)
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))
      chosen = static_cast<int>(i);
  for (uint32_t i = 0; i < nq && chosen < 0; ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) chosen = static_cast<int>(i);
  if (chosen < 0) return "no compute queue";
  dev.compute_queue_family = static_cast<uint32_t>(chosen);

  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &f11};
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f12, {}};
  vkGetPhysicalDeviceFeatures2(handle, &f2);
  std::string lacks;
  if (!f2.features.shaderInt64) lacks += " shaderInt64";
  if (!f12.storageBuffer8BitAccess) lacks += " storageBuffer8BitAccess";
  if (!lacks.empty()) return std::string(dev.props.deviceName) + " lacks" + lacks;
  dev.float64 = f2.features.shaderFloat64 == VK_TRUE;
  // float16 kernels load and store 16-bit words in storage buffers and convert
  // them in registers: both features, or float16 tensors are refused.
  dev.float16 = f12.shaderFloat16 == VK_TRUE && f11.storageBuffer16BitAccess == VK_TRUE;

  uint32_t ne = 0;
  vkEnumerateDeviceExtensionProperties(handle, nullptr, &ne, nullptr);
  std::vector<VkExtensionProperties> exts(ne);
  vkEnumerateDeviceExtensionProperties(handle, nullptr, &ne, exts.data());
  dev.has_portability_subset = has_extension(exts, "VK_KHR_portability_subset");
  dev.cooperative_matrix = has_extension(exts, "VK_KHR_cooperative_matrix");
  return {};
}

Instance create_instance() {
  Instance inst;
  if (volkInitialize() != VK_SUCCESS) {
    inst.probe.problem = VulkanProblem::no_loader;
    return inst;
  }
  inst.loader_version = volkGetInstanceVersion();
  if (inst.loader_version < VK_API_VERSION_1_1) {
    inst.probe.problem = VulkanProblem::loader_too_old;
    return inst;
  }

  uint32_t ne = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &ne, nullptr);
  std::vector<VkExtensionProperties> exts(ne);
  vkEnumerateInstanceExtensionProperties(nullptr, &ne, exts.data());
  std::vector<const char*> enabled;
  VkInstanceCreateFlags flags = 0;
  // MoltenVK (Apple) lists its devices only to instances that ask for
  // portability drivers.
  if (has_extension(exts, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    enabled.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }
  std::vector<const char*> layers;
  const char* kValidation = "VK_LAYER_KHRONOS_validation";
  if (validation_requested()) {
    if (has_layer(kValidation) && has_extension(exts, VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) {
      layers.push_back(kValidation);
      enabled.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
      inst.validation = true;
    } else {
      std::fprintf(stderr,
                   "[vulkan] HEARTH_VULKAN_VALIDATION is set but the validation layer is not installed "
                   "(Debian/Ubuntu: vulkan-validationlayers); running without it\n");
    }
  }

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "hearth";
  app.pEngineName = "hearth";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.flags = flags;
  ci.pApplicationInfo = &app;
  ci.enabledExtensionCount = static_cast<uint32_t>(enabled.size());
  ci.ppEnabledExtensionNames = enabled.data();
  ci.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  VkDebugUtilsMessengerCreateInfoEXT messenger{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
  messenger.pfnUserCallback = on_validation_message;
  if (inst.validation) ci.pNext = &messenger;  // also covers vkCreateInstance itself
  const VkResult r = vkCreateInstance(&ci, nullptr, &inst.handle);
  if (r != VK_SUCCESS) {
    inst.probe.problem = r == VK_ERROR_INCOMPATIBLE_DRIVER ? VulkanProblem::no_device : VulkanProblem::no_instance;
    inst.probe.error_text = result_name(r);
    inst.handle = VK_NULL_HANDLE;
    return inst;
  }
  volkLoadInstance(inst.handle);
  if (inst.validation) {
    VkDebugUtilsMessengerEXT handle = VK_NULL_HANDLE;
    vkCreateDebugUtilsMessengerEXT(inst.handle, &messenger, nullptr, &handle);  // lives as long as the process
  }

  uint32_t nd = 0;
  vkEnumeratePhysicalDevices(inst.handle, &nd, nullptr);
  std::vector<VkPhysicalDevice> handles(nd);
  vkEnumeratePhysicalDevices(inst.handle, &nd, handles.data());
  if (nd == 0) {
    inst.probe.problem = VulkanProblem::no_device;
    return inst;
  }
  std::string why_not;
  bool any_compute = false;
  for (VkPhysicalDevice h : handles) {
    PhysicalDevice dev;
    const std::string problem = examine(h, dev);
    if (problem.empty()) {
      inst.devices.push_back(dev);
      continue;
    }
    if (problem != "no compute queue") any_compute = true;
    why_not += (why_not.empty() ? "" : "; ") + problem;
  }
  // GPUs first (discrete, then integrated, then virtual), software devices
  // last, so vulkan:0 (and device=auto) is the fastest device, never
  // lavapipe beside a real GPU; the loader's order within a kind.
  auto rank = [](const PhysicalDevice& d) {
    switch (d.props.deviceType) {
      case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
        return 0;
      case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
        return 1;
      case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
        return 2;
      case VK_PHYSICAL_DEVICE_TYPE_CPU:
        return 4;
      default:
        return 3;
    }
  };
  std::stable_sort(inst.devices.begin(), inst.devices.end(),
                   [&](const PhysicalDevice& a, const PhysicalDevice& b) { return rank(a) < rank(b); });
  if (inst.devices.empty()) {
    inst.probe.problem = any_compute ? VulkanProblem::missing_features : VulkanProblem::no_compute_queue;
    inst.probe.error_text = why_not;
  }
  return inst;
}

}  // namespace

const Instance& instance() {
  static const Instance inst = create_instance();
  return inst;
}

size_t validation_error_count() { return g_validation_errors.load(); }

}  // namespace hearth::vulkan
