#include "hearth/backends/vulkan/command_stream.h"

#include <cstring>

#include "hearth/backends/vulkan/vk_check.h"

namespace hearth::vulkan {

CommandStream::CommandStream(VkDevice device, VkQueue queue, uint32_t queue_family, uint32_t host_memory_type,
                             VkDeviceSize params_alignment)
    : device_(device), queue_(queue), host_memory_type_(host_memory_type), params_alignment_(params_alignment) {
  for (Batch& b : batches_) {
    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
    pi.queueFamilyIndex = queue_family;
    HEARTH_VK_CHECK(vkCreateCommandPool(device_, &pi, nullptr, &b.pool));
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = b.pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    HEARTH_VK_CHECK(vkAllocateCommandBuffers(device_, &ai, &b.cmd));
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    HEARTH_VK_CHECK(vkCreateFence(device_, &fi, nullptr, &b.fence));
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kMaxSets * kDescriptorsPerSet};
    VkDescriptorPoolCreateInfo di{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    di.maxSets = kMaxSets;
    di.poolSizeCount = 1;
    di.pPoolSizes = &size;
    HEARTH_VK_CHECK(vkCreateDescriptorPool(device_, &di, nullptr, &b.descriptors));
    b.params = create_host_buffer(device_, host_memory_type_, kParamBytes);
  }
}

CommandStream::~CommandStream() {
  // At process exit the driver reclaims everything; waiting here could hang
  // on a driver already torn down, so nothing is destroyed.
}

CommandStream::Batch& CommandStream::open() {
  Batch& b = batches_[current_];
  if (b.recording) return b;
  if (b.in_flight) wait(b);
  HEARTH_VK_CHECK(vkResetCommandPool(device_, b.pool, 0));
  HEARTH_VK_CHECK(vkResetDescriptorPool(device_, b.descriptors, 0));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  HEARTH_VK_CHECK(vkBeginCommandBuffer(b.cmd, &bi));
  b.recording = true;
  b.params_used = 0;
  b.sets_used = 0;
  b.descriptors_used = 0;
  b.commands = 0;
  return b;
}

void CommandStream::wait(Batch& b) {
  if (!b.in_flight) return;
  HEARTH_VK_CHECK(vkWaitForFences(device_, 1, &b.fence, VK_TRUE, UINT64_MAX));
  HEARTH_VK_CHECK(vkResetFences(device_, 1, &b.fence));
  for (HostBuffer& s : b.staging) destroy_host_buffer(device_, s);
  b.staging.clear();
  b.in_flight = false;
}

VkCommandBuffer CommandStream::begin_command() {
  Batch& b = open();
  if (b.commands >= kMaxCommands) {
    submit();
    return begin_command();
  }
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                          VK_ACCESS_TRANSFER_WRITE_BIT;
  vkCmdPipelineBarrier(
      b.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
  ++b.commands;
  ++total_commands_;
  return b.cmd;
}

bool CommandStream::has_room(size_t param_bytes, uint32_t descriptors) const {
  const Batch& b = batches_[current_];
  if (!b.recording) return true;
  const size_t aligned = (b.params_used + params_alignment_ - 1) / params_alignment_ * params_alignment_;
  return b.commands < kMaxCommands && b.sets_used < kMaxSets &&
         b.descriptors_used + descriptors <= kMaxSets * kDescriptorsPerSet && aligned + param_bytes <= b.params.size;
}

VkDescriptorSet CommandStream::allocate_set(VkDescriptorSetLayout layout, uint32_t descriptors) {
  Batch& b = open();
  VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  ai.descriptorPool = b.descriptors;
  ai.descriptorSetCount = 1;
  ai.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  HEARTH_VK_CHECK(vkAllocateDescriptorSets(device_, &ai, &set));
  ++b.sets_used;
  b.descriptors_used += descriptors;
  return set;
}

std::pair<VkBuffer, VkDeviceSize> CommandStream::write_params(const void* data, size_t bytes) {
  Batch& b = open();
  const size_t at = (b.params_used + params_alignment_ - 1) / params_alignment_ * params_alignment_;
  HEARTH_CHECK(at + bytes <= b.params.size, DeviceError, "[vulkan] kernel parameters of ", bytes,
               " bytes do not fit the parameter buffer");
  std::memcpy(static_cast<char*>(b.params.mapped) + at, data, bytes);
  b.params_used = at + bytes;
  return {b.params.buffer, at};
}

HostBuffer& CommandStream::staging(size_t bytes) {
  Batch& b = open();
  b.staging.push_back(create_host_buffer(device_, host_memory_type_, bytes));
  return b.staging.back();
}

void CommandStream::submit() {
  Batch& b = batches_[current_];
  if (!b.recording) return;
  // Device writes become visible to host reads of mapped memory once the fence signals.
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(b.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, nullptr, 0, nullptr);
  HEARTH_VK_CHECK(vkEndCommandBuffer(b.cmd));
  b.recording = false;
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &b.cmd;
  HEARTH_VK_CHECK(vkQueueSubmit(queue_, 1, &si, b.fence));
  b.in_flight = true;
  current_ = (current_ + 1) % kBatches;
}

void CommandStream::finish() {
  submit();
  // Batches complete in submission order; waiting for each is waiting for all.
  for (int i = 1; i <= kBatches; ++i) wait(batches_[(current_ + i) % kBatches]);
}

bool CommandStream::idle() const {
  for (const Batch& b : batches_)
    if (b.recording || b.in_flight) return false;
  return true;
}

}  // namespace hearth::vulkan
