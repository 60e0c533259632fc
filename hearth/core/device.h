// Where a tensor lives. Device kinds are registered by name at start-up so a new
// backend (metal, ...) adds its kind from its own folder, touching nothing here.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace hearth {

struct DeviceKind {
  uint8_t id = 0;
  friend bool operator==(DeviceKind a, DeviceKind b) { return a.id == b.id; }
  friend bool operator!=(DeviceKind a, DeviceKind b) { return a.id != b.id; }
};

inline constexpr int kMaxDeviceKinds = 16;
inline constexpr DeviceKind kCpu{0};

// Returns the kind's id, registering the name on first use (idempotent).
DeviceKind register_device_kind(const std::string& name);
// Looks a kind up by name; nullopt-like: returns false if unknown.
bool find_device_kind(const std::string& name, DeviceKind* out);
const std::string& device_kind_name(DeviceKind kind);
int num_device_kinds();

struct Device {
  DeviceKind kind = kCpu;
  int index = 0;

  Device() = default;
  Device(DeviceKind k, int i = 0) : kind(k), index(i) {}  // NOLINT: a kind is a device
  // Parses "cpu", "cuda", "cuda:1", any registered kind name. "auto" is not a
  // device; resolve it with resolve_device() (hearth/core/device_runtime.h).
  static Device parse(const std::string& spec);

  bool is_cpu() const { return kind == kCpu; }
  std::string str() const;  // "cpu", "cuda:0"
  friend bool operator==(const Device& a, const Device& b) {
    return a.kind == b.kind && a.index == b.index;
  }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }
};

std::ostream& operator<<(std::ostream& os, const Device& d);

// What a device name that PyTorch knows and hearth does not serve stands for
// (" (PyTorch's name for Apple's GPUs through Metal; ...)" for "mps"), so
// that a command copied from PyTorch's or Hugging Face's documentation fails
// saying why; "" for any other name.
std::string foreign_device_note(const std::string& name);

}  // namespace hearth
