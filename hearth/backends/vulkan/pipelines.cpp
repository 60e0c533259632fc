#include "hearth/backends/vulkan/pipelines.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "hearth/backends/vulkan/shader_library.h"
#include "hearth/backends/vulkan/vk_check.h"
#include "hearth/backends/vulkan/vulkan_switches.h"

namespace hearth::vulkan {

PipelineLibrary::PipelineLibrary(VkDevice device, const PhysicalDevice& phys) : device_(device), phys_(phys) {
  cache_path_ = pipeline_cache_path();
  load_cache();
}

PipelineLibrary::~PipelineLibrary() {
  // Process exit: the driver reclaims the objects (see command_stream.cpp).
}

// The cache file is used only if its header (VkPipelineCacheHeaderVersionOne)
// names this device and driver; drivers check too, but not all of them.
void PipelineLibrary::load_cache() {
  std::vector<char> data;
  if (!cache_path_.empty()) {
    std::ifstream in(cache_path_, std::ios::binary);
    if (in) data.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  VkPipelineCacheHeaderVersionOne header{};
  if (data.size() >= sizeof(header)) {
    std::memcpy(&header, data.data(), sizeof(header));
    const bool ours = header.headerVersion == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
                      header.vendorID == phys_.props.vendorID && header.deviceID == phys_.props.deviceID &&
                      std::memcmp(header.pipelineCacheUUID, phys_.props.pipelineCacheUUID, VK_UUID_SIZE) == 0;
    if (!ours) data.clear();
  } else {
    data.clear();
  }
  VkPipelineCacheCreateInfo ci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  ci.initialDataSize = data.size();
  ci.pInitialData = data.empty() ? nullptr : data.data();
  if (vkCreatePipelineCache(device_, &ci, nullptr, &cache_) != VK_SUCCESS) {
    ci.initialDataSize = 0;  // a driver that refuses the data still gets an empty cache
    ci.pInitialData = nullptr;
    HEARTH_VK_CHECK(vkCreatePipelineCache(device_, &ci, nullptr, &cache_));
  }
}

void PipelineLibrary::save_if_changed() {
  if (!unsaved_) return;
  unsaved_ = false;
  last_save_ = std::chrono::steady_clock::now();
  save_cache();
}

// Best effort: a cache that cannot be written costs compile time next run, nothing else.
void PipelineLibrary::save_cache() {
  if (cache_path_.empty()) return;
  size_t n = 0;
  if (vkGetPipelineCacheData(device_, cache_, &n, nullptr) != VK_SUCCESS || n == 0) return;
  std::vector<char> data(n);
  if (vkGetPipelineCacheData(device_, cache_, &n, data.data()) != VK_SUCCESS) return;
  std::error_code ec;
  const std::filesystem::path path(cache_path_);
  std::filesystem::create_directories(path.parent_path(), ec);
  const std::string tmp = cache_path_ + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out.write(data.data(), static_cast<std::streamsize>(n));
    if (!out) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

VkDescriptorSetLayout PipelineLibrary::set_layout(uint32_t tensors) {
  auto it = layouts_.find(tensors);
  if (it != layouts_.end()) return it->second.first;
  std::vector<VkDescriptorSetLayoutBinding> bindings(tensors + 1);
  for (uint32_t i = 0; i <= tensors; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo ci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  ci.bindingCount = static_cast<uint32_t>(bindings.size());
  ci.pBindings = bindings.data();
  VkDescriptorSetLayout set = VK_NULL_HANDLE;
  HEARTH_VK_CHECK(vkCreateDescriptorSetLayout(device_, &ci, nullptr, &set));
  VkPipelineLayoutCreateInfo li{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  li.setLayoutCount = 1;
  li.pSetLayouts = &set;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  HEARTH_VK_CHECK(vkCreatePipelineLayout(device_, &li, nullptr, &layout));
  layouts_[tensors] = {set, layout};
  return set;
}

VkShaderModule PipelineLibrary::module(const std::string& shader) {
  auto it = modules_.find(shader);
  if (it != modules_.end()) return it->second;
  const EmbeddedShader& s = find_shader(shader);
  VkShaderModuleCreateInfo ci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  ci.codeSize = s.bytes;
  ci.pCode = reinterpret_cast<const uint32_t*>(s.spirv);
  VkShaderModule m = VK_NULL_HANDLE;
  HEARTH_VK_CHECK(vkCreateShaderModule(device_, &ci, nullptr, &m));
  modules_[shader] = m;
  return m;
}

const Pipeline& PipelineLibrary::get(const std::string& shader, uint32_t tensors, const std::vector<uint32_t>& spec) {
  auto key = std::make_tuple(shader, tensors, spec);
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return it->second;

  Pipeline p;
  p.set_layout = set_layout(tensors);
  p.layout = layouts_[tensors].second;
  std::vector<VkSpecializationMapEntry> entries(spec.size());
  for (uint32_t i = 0; i < spec.size(); ++i) entries[i] = {i, i * 4u, 4};
  VkSpecializationInfo si{};
  si.mapEntryCount = static_cast<uint32_t>(entries.size());
  si.pMapEntries = entries.data();
  si.dataSize = spec.size() * 4;
  si.pData = spec.data();
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module(shader);
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = &si;
  ci.layout = p.layout;
  const VkResult r = vkCreateComputePipelines(device_, cache_, 1, &ci, nullptr, &p.pipeline);
  HEARTH_CHECK(r == VK_SUCCESS, DeviceError, "[vulkan] building the pipeline of kernel '", shader,
               "' failed: ", result_name(r));
  unsaved_ = true;
  if (std::chrono::steady_clock::now() - last_save_ >= std::chrono::seconds(1)) save_if_changed();
  return pipelines_.emplace(std::move(key), p).first->second;
}

}  // namespace hearth::vulkan
