// Turning a failed Vulkan call into a DeviceError that names the call and the
// result code.
#pragma once

#include <volk.h>

#include "hearth/core/errors.h"

namespace hearth::vulkan {

const char* result_name(VkResult r);

}  // namespace hearth::vulkan

#define HEARTH_VK_CHECK(call)                                                                \
  do {                                                                                       \
    const VkResult hearth_vk_result_ = (call);                                               \
    HEARTH_CHECK(hearth_vk_result_ == VK_SUCCESS, ::hearth::DeviceError, "[vulkan] ", #call, \
                 " failed: ", ::hearth::vulkan::result_name(hearth_vk_result_));             \
  } while (0)
