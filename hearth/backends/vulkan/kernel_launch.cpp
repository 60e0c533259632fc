#include "hearth/backends/vulkan/kernel_launch.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>

#include "hearth/backends/vulkan/device_context.h"

namespace hearth::vulkan {

DeviceKind vulkan_kind() {
  static const DeviceKind kind = register_device_kind("vulkan");
  return kind;
}

const DeviceLimits& device_limits(int device) {
  static std::mutex mutex;
  static std::array<DeviceLimits, 16> cache;
  static std::array<bool, 16> filled{};
  DeviceContext& ctx = device_context(device);
  std::lock_guard<std::mutex> lock(mutex);
  if (!filled[device]) {
    const VkPhysicalDeviceLimits& l = ctx.phys->props.limits;
    DeviceLimits d;
    d.subgroup_size = std::max(1u, ctx.phys->subgroup.subgroupSize);
    d.max_workgroup_size = std::min(l.maxComputeWorkGroupSize[0], l.maxComputeWorkGroupInvocations);
    d.max_shared_bytes = l.maxComputeSharedMemorySize;
    d.max_groups_x = l.maxComputeWorkGroupCount[0];
    d.float64 = ctx.phys->float64;
    d.float16 = ctx.phys->float16;
    d.max_binding_bytes = ctx.max_range;
    // 256 invocations where the device allows (enough to hide latency on
    // GPUs; lavapipe runs a workgroup as a loop, where size matters little).
    uint32_t size = std::min(256u, d.max_workgroup_size);
    if (size >= d.subgroup_size) size -= size % d.subgroup_size;
    d.default_workgroup_size = std::max(1u, size);
    cache[device] = d;
    filled[device] = true;
  }
  return cache[device];
}

void require_float64(int device, const char* op) {
  HEARTH_CHECK(device_limits(device).float64, NotImplementedError, "[", op, "] ",
               device_context(device).phys->props.deviceName,
               " has no 64-bit floats in shaders (shaderFloat64), so float64 tensors cannot be computed on it; use "
               "float32, or set HEARTH_ENABLE_CPU_FALLBACK=1");
}

void require_float16(int device, const char* op) {
  HEARTH_CHECK(device_limits(device).float16, NotImplementedError, "[", op, "] ",
               device_context(device).phys->props.deviceName,
               " has no 16-bit floats in shaders and storage buffers (shaderFloat16, storageBuffer16BitAccess), so "
               "float16 and bfloat16 tensors cannot be computed on it; use float32 (precision fp32), or set "
               "HEARTH_ENABLE_CPU_FALLBACK=1");
}

void require_float16(const std::vector<Tensor>& tensors, const char* op) {
  for (const Tensor& t : tensors)
    if (t.defined() && (t.dtype() == DType::float16 || t.dtype() == DType::bfloat16)) {
      require_float16(t.device().index, op);
      return;
    }
}

KernelParams& KernelParams::f32(float v) {
  uint32_t w;
  std::memcpy(&w, &v, 4);
  return u32(w);
}

Dispatch::Dispatch(std::string shader_name, int device_index) : shader(std::move(shader_name)), device(device_index) {}

uint32_t Dispatch::effective_workgroup_size() const {
  return workgroup_size ? workgroup_size : device_limits(device).default_workgroup_size;
}

uint32_t Dispatch::groups_for(int64_t n) const {
  const int64_t size = effective_workgroup_size();
  const int64_t groups = std::max<int64_t>(1, (n + size - 1) / size);
  return static_cast<uint32_t>(std::min<int64_t>(groups, device_limits(device).max_groups_x));
}

uint32_t Dispatch::use_row_workgroup(int64_t row_length) {
  uint32_t limit = device_limits(device).default_workgroup_size;
  uint32_t size = 1;
  while (size * 2 <= limit && size < row_length) size *= 2;
  workgroup_size = size;
  return size;
}

void Dispatch::run() const {
  DeviceContext& ctx = device_context(device);
  const uint32_t nt = static_cast<uint32_t>(tensors.size());

  // Binding 0's words: each tensor's first element within its binding, then the kernel's.
  std::vector<uint32_t> words(nt);
  std::vector<VkDescriptorBufferInfo> infos(nt + 1);
  for (uint32_t k = 0; k < nt; ++k) {
    const Tensor& t = tensors[k];
    // An absent tensor, or an empty one (whose storage may be no memory at all), binds the dummy buffer.
    if (!t.defined() || t.numel() == 0) {
      infos[k + 1] = {ctx.dummy.buffer, 0, VK_WHOLE_SIZE};
      words[k] = 0;
      continue;
    }
    HEARTH_CHECK(t.device().kind == vulkan_kind() && t.device().index == device, DeviceError, "[vulkan] kernel '",
                 shader, "' got tensor ", k, " on ", t.device().str(), ", expected vulkan:", device);
    const BufferRef ref = ctx.memory->locate(t.data_ptr());
    const VkDeviceSize base = ref.offset / ctx.bind_alignment * ctx.bind_alignment;
    const VkDeviceSize range = std::min(ref.block_size - base, ctx.max_range);
    // The furthest byte the tensor reaches from its first element.
    int64_t reach = 1;
    for (int64_t d = 0; d < t.dim(); ++d)
      if (t.size(d) > 0) reach += (t.size(d) - 1) * std::max<int64_t>(t.stride(d), 0);
    const VkDeviceSize end = ref.offset - base + static_cast<VkDeviceSize>(reach) * t.element_size();
    HEARTH_CHECK(end <= range, DeviceError, "[vulkan] kernel '", shader, "': tensor ", k, " spans ", end,
                 " bytes, more than one binding may on this device (", ctx.max_range, ")");
    infos[k + 1] = {ref.buffer, base, range};
    words[k] = static_cast<uint32_t>((ref.offset - base) / t.element_size());
  }
  words.insert(words.end(), params.words().begin(), params.words().end());
  if (words.empty()) words.push_back(0);  // a binding is never empty

  const uint32_t size = effective_workgroup_size();
  std::vector<uint32_t> constants;
  constants.push_back(size);
  constants.insert(constants.end(), spec.begin(), spec.end());

  std::lock_guard<std::recursive_mutex> lock(ctx.mutex);
  const Pipeline& p = ctx.pipelines->get(shader, nt, constants);
  const size_t bytes = words.size() * 4;
  if (!ctx.stream->has_room(bytes, nt + 1)) ctx.stream->submit();
  const auto [param_buffer, param_offset] = ctx.stream->write_params(words.data(), bytes);
  infos[0] = {param_buffer, param_offset, bytes};
  const VkDescriptorSet set = ctx.stream->allocate_set(p.set_layout, nt + 1);
  std::vector<VkWriteDescriptorSet> writes(nt + 1);
  for (uint32_t b = 0; b <= nt; ++b) {
    writes[b] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[b].dstSet = set;
    writes[b].dstBinding = b;
    writes[b].descriptorCount = 1;
    writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[b].pBufferInfo = &infos[b];
  }
  vkUpdateDescriptorSets(ctx.device, nt + 1, writes.data(), 0, nullptr);
  VkCommandBuffer cmd = ctx.stream->begin_command();
  vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
  vkCmdDispatch(cmd, groups_x, groups_y, groups_z);
}

uint64_t commands_recorded(int device) {
  DeviceContext& ctx = device_context(device);
  std::lock_guard<std::recursive_mutex> lock(ctx.mutex);
  return ctx.stream->commands_recorded();
}

}  // namespace hearth::vulkan
