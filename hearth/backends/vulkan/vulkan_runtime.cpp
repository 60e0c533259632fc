// The Vulkan device runtime: discovery (with the reason when there is no
// usable device), memory through the caching pool, and copies ordered with
// the kernels on the device's one compute queue.
#include <cstring>
#include <memory>
#include <sstream>

#include "hearth/backends/vulkan/device_context.h"
#include "hearth/backends/vulkan/instance.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/backends/vulkan/vulkan_switches.h"
#include "hearth/core/device_runtime.h"

namespace hearth::vulkan {
namespace {

std::string version_string(uint32_t v) {
  std::ostringstream os;
  os << VK_API_VERSION_MAJOR(v) << "." << VK_API_VERSION_MINOR(v) << "." << VK_API_VERSION_PATCH(v);
  return os.str();
}

std::string gib(VkDeviceSize bytes) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0) << " GiB";
  return os.str();
}

// The memory tensors get (device_context.cpp's choice, from the properties
// alone): the largest device-local heap, and whether the host can map it.
std::string describe_memory(const PhysicalDevice& d) {
  const VkPhysicalDeviceMemoryProperties& mem = d.memory;
  int heap = -1;
  for (uint32_t h = 0; h < mem.memoryHeapCount; ++h)
    if ((mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
        (heap < 0 || mem.memoryHeaps[h].size > mem.memoryHeaps[heap].size))
      heap = static_cast<int>(h);
  if (heap < 0) return "memory: no device-local heap";
  const VkMemoryPropertyFlags unified =
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  bool host_visible = false;
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i)
    host_visible = host_visible || (static_cast<int>(mem.memoryTypes[i].heapIndex) == heap &&
                                    (mem.memoryTypes[i].propertyFlags & unified) == unified);
  std::string s = "memory " + gib(mem.memoryHeaps[heap].size) + " device-local, ";
  if (!host_visible) return s + "not host-visible (staged copies)";
  return s + "host-visible (unified" + (staged_memory_forced() ? ", staged by HEARTH_VULKAN_STAGED_MEMORY)" : ")");
}

// One line per device: what `hearth env` shows of it.
std::string describe_device(int index, const PhysicalDevice& d) {
  std::ostringstream os;
  os << "\n  vulkan:" << index << " " << d.props.deviceName << ": driver " << d.driver.driverName << " "
     << d.driver.driverInfo << ", Vulkan " << version_string(d.props.apiVersion) << "; " << describe_memory(d)
     << "; subgroup size " << d.subgroup.subgroupSize << "; float16 " << (d.float16 ? "yes" : "no") << "; float64 "
     << (d.float64 ? "yes" : "no") << "; cooperative matrix (VK_KHR_cooperative_matrix) "
     << (d.cooperative_matrix ? "yes" : "no");
  return os.str();
}

class VulkanRuntime final : public DeviceRuntime {
 public:
  // The instance is made on the first question (loading the loader and
  // drivers is slow), never at start-up.
  bool is_available() const override { return !instance().devices.empty(); }
  std::string unavailable_reason() const override { return describe_vulkan_problem(instance().probe); }
  int device_count() const override { return static_cast<int>(instance().devices.size()); }
  std::string device_name(int index) const override {
    const auto& devs = instance().devices;
    if (index < 0 || index >= static_cast<int>(devs.size())) return "unknown";
    return devs[index].props.deviceName;
  }
  // Below CUDA (100) on a machine with both. A CPU-type device (lavapipe,
  // software rendering) never wins device=auto: hearth's CPU backend is
  // faster. Devices are ordered GPUs first, so device 0 decides.
  int auto_priority() const override {
    const auto& devs = instance().devices;
    if (devs.empty() || devs[0].props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) return -1;
    return 50;
  }

  void* allocate(size_t nbytes, int index) override { return device_context(index).memory->allocate(nbytes); }
  void deallocate(void* ptr, int index) override { device_context(index).memory->deallocate(ptr); }

  void copy_from_host(void* dst, const void* src, size_t n, int index) override {
    if (n == 0) return;
    DeviceContext& ctx = device_context(index);
    std::lock_guard<std::recursive_mutex> lock(ctx.mutex);
    const BufferRef ref = ctx.memory->locate(dst);
    // Unified memory with nothing queued: the bytes are written in place.
    // Otherwise they are staged (so the caller may reuse `src` at once) and
    // copied in order with the kernels already recorded.
    if (ref.mapped && ctx.stream->idle()) {
      std::memcpy(ref.mapped, src, n);
      return;
    }
    // The command first: beginning it may submit a full batch and open the
    // next, and the staging buffer must belong to the batch that runs the copy.
    VkCommandBuffer cmd = ctx.stream->begin_command();
    HostBuffer& staging = ctx.stream->staging(n);
    std::memcpy(staging.mapped, src, n);
    VkBufferCopy region{0, ref.offset, n};
    vkCmdCopyBuffer(cmd, staging.buffer, ref.buffer, 1, &region);
  }
  void copy_to_host(void* dst, const void* src, size_t n, int index) override {
    if (n == 0) return;
    DeviceContext& ctx = device_context(index);
    std::lock_guard<std::recursive_mutex> lock(ctx.mutex);
    const BufferRef ref = ctx.memory->locate(src);
    ctx.pipelines->save_if_changed();
    if (ref.mapped) {
      ctx.stream->finish();
      std::memcpy(dst, ref.mapped, n);
      return;
    }
    // A buffer of its own: the batch's staging buffers are freed when it completes.
    HostBuffer staging = create_host_buffer(ctx.device, ctx.host_memory_type, n);
    VkCommandBuffer cmd = ctx.stream->begin_command();
    VkBufferCopy region{ref.offset, 0, n};
    vkCmdCopyBuffer(cmd, ref.buffer, staging.buffer, 1, &region);
    ctx.stream->finish();
    std::memcpy(dst, staging.mapped, n);
    destroy_host_buffer(ctx.device, staging);
  }
  void copy_within(void* dst, const void* src, size_t n, int index) override {
    if (n == 0) return;
    DeviceContext& ctx = device_context(index);
    std::lock_guard<std::recursive_mutex> lock(ctx.mutex);
    const BufferRef from = ctx.memory->locate(src);
    const BufferRef to = ctx.memory->locate(dst);
    VkCommandBuffer cmd = ctx.stream->begin_command();
    VkBufferCopy region{from.offset, to.offset, n};
    vkCmdCopyBuffer(cmd, from.buffer, to.buffer, 1, &region);
  }
  void synchronize(int index) override {
    DeviceContext& ctx = device_context(index);
    std::lock_guard<std::recursive_mutex> lock(ctx.mutex);
    ctx.pipelines->save_if_changed();
    ctx.stream->finish();
  }

  MemoryStats memory_stats(int index) const override { return device_context(index).memory->stats(); }
  void reset_peak_memory_stats(int index) override { device_context(index).memory->reset_peak(); }
  void empty_cache(int index) override { device_context(index).memory->empty_cache(); }
  bool set_memory_limit(int index, size_t bytes) override {
    device_context(index).memory->set_limit(bytes);
    return true;
  }
  // Vulkan 1.2 has no portable free-memory query (VK_EXT_memory_budget is
  // optional): the heap's size less what this process holds.
  void memory_info(int index, size_t* free_bytes, size_t* total_bytes) const override {
    DeviceContext& ctx = device_context(index);
    const MemoryStats s = ctx.memory->stats();
    *total_bytes = ctx.heap_size;
    *free_bytes = ctx.heap_size > s.reserved ? ctx.heap_size - s.reserved : 0;
  }
  std::string version_info() const override {
    const Instance& inst = instance();
    std::ostringstream os;
    if (inst.handle == VK_NULL_HANDLE) return "Vulkan: " + describe_vulkan_problem(inst.probe);
    os << "Vulkan loader " << version_string(inst.loader_version);
    for (const auto& d : inst.devices)
      os << "; " << d.props.deviceName << ": Vulkan " << version_string(d.props.apiVersion) << ", driver "
         << d.driver.driverName << " " << d.driver.driverInfo;
    if (inst.validation) os << "; validation layer on (" << validation_error_count() << " errors so far)";
    // Then a line per device: what it offers the kernels.
    for (size_t i = 0; i < inst.devices.size(); ++i) os << describe_device(static_cast<int>(i), inst.devices[i]);
    return os.str();
  }
};

const bool registered = [] {
  register_device_runtime(vulkan_kind(), std::make_unique<VulkanRuntime>());
  return true;
}();

}  // namespace
}  // namespace hearth::vulkan
