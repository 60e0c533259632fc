// Every switch of the Vulkan backend, declared once (see hearth/core/switches.h).
#include "hearth/backends/vulkan/vulkan_switches.h"

#include "hearth/core/env.h"

using hearth::SwitchReading;

HEARTH_DECLARE_SWITCH(FlagSwitch, vulkan_validation,
                      {.name = "HEARTH_VULKAN_VALIDATION",
                       .default_value = "0",
                       .description = "Vulkan builds: turn on Khronos' validation layer and count every error it "
                                      "reports (`hearth env` prints the count)",
                       .reader = "hearth/backends/vulkan/instance.cpp (once, when the instance is made)"})
HEARTH_DECLARE_SWITCH(FlagSwitch, vulkan_staged_memory,
                      {.name = "HEARTH_VULKAN_STAGED_MEMORY",
                       .default_value = "0",
                       .description = "Vulkan builds: keep tensors in memory the host does not map, with copies "
                                      "through staging buffers, even where device memory is host-visible (tests "
                                      "a discrete GPU's path on an integrated or software device)",
                       .reader = "hearth/backends/vulkan/device_context.cpp (once, when a device is opened)"})
HEARTH_DECLARE_SWITCH(TextSwitch, vulkan_pipeline_cache,
                      {.name = "HEARTH_VULKAN_PIPELINE_CACHE",
                       .default_value = "",
                       .description = "Vulkan builds: the file compiled pipelines are kept in between runs (unset: "
                                      "$XDG_CACHE_HOME/hearth/ or ~/.cache/hearth/vulkan_pipeline_cache.bin; off: "
                                      "none)",
                       .reader = "hearth/backends/vulkan/pipelines.cpp (once, when a device is opened)",
                       .allowed = "a file path, or off"})

namespace hearth::vulkan {

bool validation_requested() { return switches::vulkan_validation().get(); }

bool staged_memory_forced() { return switches::vulkan_staged_memory().get(); }

std::string pipeline_cache_path() {
  if (switches::vulkan_pipeline_cache().is_set()) {
    const std::string chosen = switches::vulkan_pipeline_cache().get();
    return chosen == "off" ? std::string() : chosen;
  }
  const std::string file = "/hearth/vulkan_pipeline_cache.bin";
  const std::string xdg = outside_env("XDG_CACHE_HOME");
  if (!xdg.empty()) return xdg + file;
  const std::string home = outside_env("HOME");
  if (!home.empty()) return home + "/.cache" + file;
  return {};
}

}  // namespace hearth::vulkan
