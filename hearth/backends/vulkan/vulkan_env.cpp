#include "hearth/backends/vulkan/vulkan_env.h"

#include "hearth/core/env.h"

namespace hearth::vulkan {

bool validation_requested() { return env_flag("HEARTH_VULKAN_VALIDATION"); }

bool staged_memory_forced() { return env_flag("HEARTH_VULKAN_STAGED_MEMORY"); }

std::string pipeline_cache_path() {
  const std::string unset = "\x01";
  const std::string chosen = env_string("HEARTH_VULKAN_PIPELINE_CACHE", unset);
  if (chosen != unset) return chosen == "off" ? std::string() : chosen;
  const std::string file = "/hearth/vulkan_pipeline_cache.bin";
  const std::string xdg = env_string("XDG_CACHE_HOME");
  if (!xdg.empty()) return xdg + file;
  const std::string home = env_string("HOME");
  if (!home.empty()) return home + "/.cache" + file;
  return {};
}

}  // namespace hearth::vulkan
