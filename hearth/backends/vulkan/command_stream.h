// Recording and submitting a device's work. Commands (dispatches, copies) are
// recorded into the open batch's command buffer, and the batch is submitted
// when the host needs a result (copy_to_host, synchronize) or when it fills up
// (kMaxCommands commands, its descriptor pool or its parameter buffer), so
// the driver sees few, large submissions. A few batches rotate: while one
// runs, the next is recorded; a batch is reused once its fence has signalled.
//
// Ordering: every command is preceded by one global memory barrier (compute
// and transfer writes before compute and transfer reads and writes). That is
// stricter than needed (independent dispatches could overlap) but simple and
// always right; barriers also order work across batches, since they cover
// everything submitted earlier to the queue. Each batch ends with a barrier
// that makes device writes visible to the host, for unified memory.
#pragma once

#include <volk.h>

#include <array>
#include <cstddef>
#include <vector>

#include "hearth/backends/vulkan/memory.h"

namespace hearth::vulkan {

class CommandStream {
 public:
  CommandStream(VkDevice device, VkQueue queue, uint32_t queue_family, uint32_t host_memory_type,
                VkDeviceSize params_alignment);
  ~CommandStream();
  CommandStream(const CommandStream&) = delete;
  CommandStream& operator=(const CommandStream&) = delete;

  // Every call below is made with the device's mutex held (device_context.h).

  // Starts one command: emits the barrier and returns the command buffer to record it in.
  VkCommandBuffer begin_command();
  // A descriptor set of `layout` from the open batch (valid until the batch is reused).
  VkDescriptorSet allocate_set(VkDescriptorSetLayout layout, uint32_t descriptors);
  // Copies `bytes` into the open batch's parameter buffer; returns (buffer, offset).
  std::pair<VkBuffer, VkDeviceSize> write_params(const void* data, size_t bytes);
  // A host buffer of at least `bytes` that lives until the open batch has run.
  // Call it after begin_command() for the command that uses it (which may
  // move to a new batch), never before.
  HostBuffer& staging(size_t bytes);
  // Whether the open batch can take one more dispatch with `param_bytes` of
  // parameters and `descriptors` bindings; if not, the caller submits first.
  bool has_room(size_t param_bytes, uint32_t descriptors) const;

  void submit();      // submits the open batch if it holds commands
  void finish();      // submits and waits for everything queued
  bool idle() const;  // nothing recorded and nothing running
  uint64_t commands_recorded() const { return total_commands_; }

 private:
  static constexpr int kBatches = 3;
  static constexpr uint32_t kMaxCommands = 128;
  static constexpr uint32_t kMaxSets = 512;
  static constexpr uint32_t kDescriptorsPerSet = 8;  // on average; a set may hold more
  static constexpr size_t kParamBytes = 256 * 1024;

  struct Batch {
    VkCommandPool pool = VK_NULL_HANDLE;
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    VkDescriptorPool descriptors = VK_NULL_HANDLE;
    HostBuffer params;
    size_t params_used = 0;
    uint32_t sets_used = 0;
    uint32_t descriptors_used = 0;
    uint32_t commands = 0;
    bool recording = false;
    bool in_flight = false;
    std::vector<HostBuffer> staging;
  };
  Batch& open();        // the batch being recorded, begun if needed
  void wait(Batch& b);  // waits for its fence and recycles it

  VkDevice device_;
  VkQueue queue_;
  uint32_t host_memory_type_;
  VkDeviceSize params_alignment_;
  std::array<Batch, kBatches> batches_;
  int current_ = 0;
  uint64_t total_commands_ = 0;
};

}  // namespace hearth::vulkan
