// Compute pipelines, built on first use from an embedded shader and its
// specialisation constants, and kept for the process. Every pipeline's
// descriptor set is binding 0, the kernel's parameters, then one storage
// buffer per tensor (kernel_launch.h). Compiled pipelines also go into a
// VkPipelineCache that is loaded at start-up from, and saved (atomically:
// a temporary file, then a rename) to, $XDG_CACHE_HOME/hearth/vulkan_pipeline_cache.bin;
// a file written for another device or driver (its header says which) is
// ignored. It is saved after a new pipeline at most once a second (a GPU's
// cache grows to megabytes), and at the host's synchronisation points when
// pipelines were added since.
#pragma once

#include <volk.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "hearth/backends/vulkan/instance.h"

namespace hearth::vulkan {

struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
};

class PipelineLibrary {
 public:
  PipelineLibrary(VkDevice device, const PhysicalDevice& phys);
  ~PipelineLibrary();
  PipelineLibrary(const PipelineLibrary&) = delete;
  PipelineLibrary& operator=(const PipelineLibrary&) = delete;

  // `spec[i]` is specialisation constant i (32-bit). Called with the device's mutex held.
  const Pipeline& get(const std::string& shader, uint32_t tensors, const std::vector<uint32_t>& spec);
  size_t size() const { return pipelines_.size(); }
  // Writes the cache file if pipelines were built since it was last written.
  void save_if_changed();

 private:
  VkDescriptorSetLayout set_layout(uint32_t tensors);
  VkShaderModule module(const std::string& shader);
  void load_cache();
  void save_cache();

  VkDevice device_;
  const PhysicalDevice& phys_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::string cache_path_;
  bool unsaved_ = false;
  std::chrono::steady_clock::time_point last_save_{};
  std::map<uint32_t, std::pair<VkDescriptorSetLayout, VkPipelineLayout>> layouts_;
  std::map<std::string, VkShaderModule> modules_;
  std::map<std::tuple<std::string, uint32_t, std::vector<uint32_t>>, Pipeline> pipelines_;
};

}  // namespace hearth::vulkan
