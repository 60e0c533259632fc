#include "hearth/core/device_runtime.h"

#include <array>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "hearth/core/cpu_runtime.h"
#include "hearth/core/errors.h"

namespace hearth {
namespace {

struct RuntimeTable {
  std::mutex mu;
  std::array<std::unique_ptr<DeviceRuntime>, kMaxDeviceKinds> runtimes;
  RuntimeTable() { runtimes[kCpu.id] = make_cpu_runtime(); }
};

RuntimeTable& table() {
  static RuntimeTable t;
  return t;
}

}  // namespace

void register_device_runtime(DeviceKind kind, std::unique_ptr<DeviceRuntime> runtime) {
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  t.runtimes[kind.id] = std::move(runtime);
}

bool has_device_runtime(DeviceKind kind) {
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.runtimes[kind.id] != nullptr;
}

DeviceRuntime& device_runtime(DeviceKind kind) {
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  HEARTH_CHECK(t.runtimes[kind.id] != nullptr, DeviceError, "[device] no runtime is registered for device kind '",
               device_kind_name(kind), "'");
  return *t.runtimes[kind.id];
}

void check_device_usable(const Device& device) {
  DeviceRuntime& rt = device_runtime(device.kind);
  if (!rt.is_available()) {
    HEARTH_THROW(DeviceError, "[device] ", device.str(),
                 " was requested but is not available: ", rt.unavailable_reason(),
                 " Use --cpu (device: cpu) to train on the CPU.");
  }
  int n = rt.device_count();
  HEARTH_CHECK(device.index >= 0 && device.index < n, DeviceError, "[device] ", device.str(),
               " was requested but only ", n, " ", device_kind_name(device.kind), " device(s) are visible");
}

DeviceRuntime* pinned_memory_runtime() {
  Device best = resolve_device("auto");
  return best.is_cpu() ? nullptr : &device_runtime(best.kind);
}

Device resolve_device(const std::string& spec) {
  if (spec.empty() || spec == "auto") {
    Device best(kCpu, 0);
    int best_priority = 0;
    for (int i = 0; i < num_device_kinds(); ++i) {
      DeviceKind k{static_cast<uint8_t>(i)};
      if (!has_device_runtime(k)) continue;
      DeviceRuntime& rt = device_runtime(k);
      if (rt.auto_priority() > best_priority && rt.is_available() && rt.device_count() > 0) {
        best = Device(k, 0);
        best_priority = rt.auto_priority();
      }
    }
    return best;
  }
  Device d = Device::parse(spec);
  check_device_usable(d);
  return d;
}

}  // namespace hearth
