#include "hearth/core/device.h"

#include <mutex>
#include <vector>

#include "hearth/core/errors.h"

namespace hearth {
namespace {

struct KindTable {
  std::mutex mu;
  std::vector<std::string> names;
  // Full capacity up front: device_kind_name() hands out references, which a
  // reallocation on a later registration would leave dangling.
  KindTable() {
    names.reserve(kMaxDeviceKinds);
    names.emplace_back("cpu");
  }
};

KindTable& table() {
  static KindTable t;
  return t;
}

}  // namespace

DeviceKind register_device_kind(const std::string& name) {
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  for (size_t i = 0; i < t.names.size(); ++i)
    if (t.names[i] == name) return DeviceKind{static_cast<uint8_t>(i)};
  HEARTH_CHECK(t.names.size() < kMaxDeviceKinds, ValueError, "[device] too many device kinds registered (max ",
               kMaxDeviceKinds, ") when adding '", name, "'");
  t.names.push_back(name);
  return DeviceKind{static_cast<uint8_t>(t.names.size() - 1)};
}

bool find_device_kind(const std::string& name, DeviceKind* out) {
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  for (size_t i = 0; i < t.names.size(); ++i) {
    if (t.names[i] == name) {
      *out = DeviceKind{static_cast<uint8_t>(i)};
      return true;
    }
  }
  return false;
}

const std::string& device_kind_name(DeviceKind kind) {
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  static const std::string unknown = "<unknown device kind>";
  return kind.id < t.names.size() ? t.names[kind.id] : unknown;
}

int num_device_kinds() {
  auto& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return static_cast<int>(t.names.size());
}

Device Device::parse(const std::string& spec) {
  std::string name = spec;
  int index = 0;
  auto colon = spec.find(':');
  if (colon != std::string::npos) {
    name = spec.substr(0, colon);
    std::string idx = spec.substr(colon + 1);
    bool digits = !idx.empty() && idx.find_first_not_of("0123456789") == std::string::npos;
    HEARTH_CHECK(digits && idx.size() < 6, ValueError, "[device] invalid device index in '", spec,
                 "'; expected a form like 'cuda' or 'cuda:1'");
    index = std::stoi(idx);
  }
  HEARTH_CHECK(name != "auto", ValueError,
               "[device] 'auto' must be resolved with resolve_device(), not parsed as a device");
  DeviceKind kind;
  if (!find_device_kind(name, &kind)) {
    std::string known;
    for (int i = 0; i < num_device_kinds(); ++i)
      known += (i ? ", " : "") + device_kind_name(DeviceKind{static_cast<uint8_t>(i)});
    HEARTH_THROW(ValueError, "[device] unknown device '", spec, "'", foreign_device_note(name),
                 "; expected one of: auto, ", known, " (optionally with ':index')");
  }
  HEARTH_CHECK(!(kind == kCpu && index != 0), ValueError, "[device] the cpu device has only index 0, got '",
               spec, "'");
  return Device(kind, index);
}

std::string Device::str() const {
  if (kind == kCpu) return "cpu";
  return device_kind_name(kind) + ":" + std::to_string(index);
}

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

std::string foreign_device_note(const std::string& name) {
  struct Foreign {
    const char* name;
    const char* what;
  };
  static const Foreign kForeign[] = {
      {"mps", "Apple's GPUs through Metal"},
      {"xpu", "Intel's GPUs"},
      {"xla", "TPUs and other XLA devices"},
      {"tpu", "Google's TPUs (through XLA)"},
      {"hpu", "Intel Gaudi accelerators"},
      {"npu", "Ascend NPUs"},
  };
  for (const Foreign& f : kForeign)
    if (name == f.name)
      return std::string(" (PyTorch's name for ") + f.what + "; this build of hearth has no backend for them)";
  return "";
}

}  // namespace hearth
