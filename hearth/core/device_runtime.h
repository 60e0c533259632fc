// What a backend provides below the kernels: memory, copies to and from the
// host, synchronisation and discovery. One runtime per device kind; the CPU's is
// built in, accelerators register theirs from their own backend folder.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "hearth/core/device.h"

namespace hearth {

// Memory accounting of a device's allocator (bytes).
struct MemoryStats {
  size_t active = 0;             // held by live tensors
  size_t peak_active = 0;        // high-water mark of active since the last reset
  size_t reserved = 0;           // obtained from the device and kept for reuse
  size_t limit = 0;              // 0: no limit beyond the device's memory
  size_t num_device_allocs = 0;  // calls that had to obtain new memory from the device
  size_t num_ooms = 0;
};

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;

  // Discovery. A runtime can be registered yet unavailable (built without the
  // toolkit, no driver, no device): unavailable_reason() then says why and what
  // to do, in words the backend composes (its own diagnosis stays in its
  // folder), and is all that the layers above see of it.
  virtual bool is_available() const = 0;
  virtual std::string unavailable_reason() const { return {}; }
  virtual int device_count() const = 0;
  virtual std::string device_name(int index) const = 0;
  // For device=auto: the available kind with the highest priority wins (cpu is 0).
  virtual int auto_priority() const { return 0; }

  // Memory. allocate never returns null: it throws OutOfMemoryError.
  virtual void* allocate(size_t nbytes, int index) = 0;
  virtual void deallocate(void* ptr, int index) = 0;

  // Page-locked host memory the device can copy from without staging
  // (torch's pin_memory). nullptr when the runtime has none to give. A copy
  // from it returns at once; the runtime keeps a freed block out of reuse
  // until every copy from it has finished.
  virtual void* allocate_pinned_host(size_t /*nbytes*/) { return nullptr; }
  virtual void free_pinned_host(void* /*ptr*/) {}

  // Copies of contiguous bytes. They are ordered with the device's kernels;
  // copy_to_host returns when the bytes are on the host. copy_from_host may
  // return before the copy ends only when `src` is pinned memory of this runtime.
  virtual void copy_from_host(void* dst, const void* src, size_t nbytes, int index) = 0;
  virtual void copy_to_host(void* dst, const void* src, size_t nbytes, int index) = 0;
  virtual void copy_within(void* dst, const void* src, size_t nbytes, int index) = 0;
  virtual void synchronize(int /*index*/) {}

  // A point in a device's queue of work, for timing it without blocking the
  // host (CUDA events); null where the runtime has none (the CPU runs every
  // op before returning). elapsed_ms waits for `end` and returns the device
  // time between the two points.
  class TimingEvent {
   public:
    virtual ~TimingEvent() = default;
  };
  virtual std::shared_ptr<TimingEvent> record_timing_event(int /*index*/) { return nullptr; }
  virtual double elapsed_ms(const TimingEvent& /*start*/, const TimingEvent& /*end*/) { return 0.0; }

  // Step graphs (CUDA graphs): the device work of one step recorded once and
  // replayed with a single launch, so the host's per-op cost leaves the step.
  // A step may be recorded only if replaying its work is the same as running
  // it: it must not read device values on the host, must update the tensors
  // that outlive it in place (none made before it freed, none it makes kept),
  // and must take no host value that changes between steps. Random ops are
  // the exception the runtime handles: each replay draws fresh numbers, the
  // ones the step run eagerly at that point would have drawn.
  class StepGraph {
   public:
    virtual ~StepGraph() = default;
    // Queues the recorded work; returns without waiting for it.
    virtual void replay() = 0;
  };
  virtual bool supports_step_graphs() const { return false; }
  // Runs `step` eagerly and watches it: empty when it can be recorded, else
  // why not, in words for the user.
  virtual std::string rehearse_step(int /*index*/, const std::function<void()>& step) {
    step();
    return "this device's runtime has no step graphs";
  }
  // Records `step` without running it. Throws (leaving the program's state as
  // before the call) if the runtime cannot record what the step does.
  virtual std::unique_ptr<StepGraph> capture_step(int /*index*/, const std::function<void()>& /*step*/) {
    return nullptr;
  }

  // Allocator statistics and cache control; hosts without a cache report zeros.
  virtual MemoryStats memory_stats(int /*index*/) const { return {}; }
  virtual void reset_peak_memory_stats(int /*index*/) {}
  virtual void empty_cache(int /*index*/) {}
  // Caps the memory live tensors may hold (0: no cap beyond the device's);
  // false where the runtime has no such cap (the CUDA allocator takes
  // HEARTH_CUDA_MEMORY_FRACTION at start-up instead).
  virtual bool set_memory_limit(int /*index*/, size_t /*bytes*/) { return false; }
  // Free and total memory of the device, for messages and the trainer's banner.
  virtual void memory_info(int /*index*/, size_t* free_bytes, size_t* total_bytes) const {
    *free_bytes = 0;
    *total_bytes = 0;
  }
  // Versions of the runtime and its libraries, for `hearth env`.
  virtual std::string version_info() const { return {}; }
};

void register_device_runtime(DeviceKind kind, std::unique_ptr<DeviceRuntime> runtime);
bool has_device_runtime(DeviceKind kind);
// Throws DeviceError naming the kind if no runtime is registered.
DeviceRuntime& device_runtime(DeviceKind kind);

// The runtime that gives pinned host memory: the available accelerator with
// the highest auto priority, or nullptr where there is none (CPU-only machines).
DeviceRuntime* pinned_memory_runtime();

// Throws DeviceError with the runtime's reason if the device cannot be used
// (unavailable kind, index out of range).
void check_device_usable(const Device& device);

// "auto" -> the best available accelerator, else cpu. Any other spec is parsed
// and checked usable, so asking for an absent accelerator fails loudly.
Device resolve_device(const std::string& spec);

}  // namespace hearth
