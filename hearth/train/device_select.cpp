#include "hearth/train/device_select.h"

#include <cstdio>
#include <utility>
#include <vector>

#include "hearth/core/device_runtime.h"
#include "hearth/core/env.h"
#include "hearth/core/errors.h"
#include "hearth/train/count_text.h"

namespace hearth::train {
namespace {

// Accelerator kinds, built or not (a build without one registers a runtime
// that says why); kinds for tests declare a negative priority and are left out.
std::vector<DeviceKind> accelerator_kinds() {
  std::vector<DeviceKind> out;
  for (int i = 0; i < num_device_kinds(); ++i) {
    DeviceKind k{static_cast<uint8_t>(i)};
    if (k == kCpu || !has_device_runtime(k)) continue;
    if (device_runtime(k).auto_priority() >= 0) out.push_back(k);
  }
  return out;
}

std::string gib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

std::string use_instead() { return ". Available: " + available_devices() + ". Use --device auto or --cpu."; }

// This process's index among the ranks on its machine: LOCAL_RANK (torchrun,
// hearth launch), else Slurm's or Open MPI's name for it; 0 alone.
int local_rank() {
  for (const char* name : {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"}) {
    std::string v = outside_env(name);
    if (v.empty()) continue;
    bool digits = v.find_first_not_of("0123456789") == std::string::npos && v.size() < 6;
    HEARTH_CHECK(digits, ValueError, "[trainer] ", name, " must be a non-negative integer, got '", v, "'");
    return std::stoi(v);
  }
  return 0;
}

// "cuda:0 (NVIDIA H100 80GB HBM3), cuda:1 (...)": what a user can pick instead.
std::string list_devices(DeviceKind kind) {
  DeviceRuntime& rt = device_runtime(kind);
  std::string s;
  for (int d = 0; d < rt.device_count(); ++d) {
    if (!s.empty()) s += ", ";
    s += Device(kind, d).str() + " (" + rt.device_name(d) + ")";
  }
  return s;
}

}  // namespace

std::string available_devices() {
  std::string s = "cpu";
  for (DeviceKind k : accelerator_kinds()) {
    DeviceRuntime& rt = device_runtime(k);
    if (!rt.is_available()) continue;
    for (int d = 0; d < rt.device_count(); ++d) s += ", " + Device(k, d).str();
  }
  return s;
}

std::string no_accelerator_reason() {
  std::vector<std::pair<std::string, std::string>> reasons;
  for (DeviceKind k : accelerator_kinds()) {
    DeviceRuntime& rt = device_runtime(k);
    if (rt.is_available() && rt.device_count() > 0) continue;
    std::string why = rt.is_available() ? "no " + device_kind_name(k) + " device found" : rt.unavailable_reason();
    while (!why.empty() && (why.back() == '.' || why.back() == ' ')) why.pop_back();
    reasons.emplace_back(device_kind_name(k), why);
  }
  if (reasons.empty()) return "hearth has no accelerator backend";
  if (reasons.size() == 1) return reasons[0].second;
  std::string s;
  for (const auto& [kind, why] : reasons) {
    if (!s.empty()) s += "; ";
    s += kind;
    s += ": ";
    s += why;
  }
  return s;
}

std::string describe_device(const Device& device) {
  if (device.is_cpu()) return "cpu";
  DeviceRuntime& rt = device_runtime(device.kind);
  std::string s = device.str() + " (" + rt.device_name(device.index);
  try {
    size_t free_b = 0, total_b = 0;
    rt.memory_info(device.index, &free_b, &total_b);
    if (total_b > 0) s += ", " + gib(free_b) + " free";
  } catch (const Error&) {
    // The name alone still identifies the device; memory is a courtesy.
  }
  return s + ")";
}

DeviceChoice select_device(const std::string& spec, bool use_cpu) {
  if (use_cpu) return {Device(), "cpu (use_cpu is set)"};
  if (spec.empty() || spec == "auto") {
    Device d = resolve_device("auto");
    if (d.is_cpu()) return {d, "cpu (no accelerator: " + no_accelerator_reason() + ")"};
    int rank = local_rank();
    int count = device_runtime(d.kind).device_count();
    HEARTH_CHECK(rank < count, DeviceError, "[trainer] LOCAL_RANK is ", rank, " but only ",
                 count_of(count, device_kind_name(d.kind) + " device"), count == 1 ? " is" : " are",
                 " visible: ", list_devices(d.kind), use_instead());
    d.index = rank;
    return {d, describe_device(d)};
  }
  // Lightning's "gpu": whichever accelerator auto would pick, of any kind;
  // "gpu:N" its N-th device. Never the CPU.
  if (spec == "gpu" || spec.rfind("gpu:", 0) == 0) {
    const Device best = resolve_device("auto");
    HEARTH_CHECK(!best.is_cpu(), DeviceError, "[trainer] device '", spec,
                 "': no accelerator is available (", no_accelerator_reason(), ")", use_instead());
    return select_device(device_kind_name(best.kind) + spec.substr(3), false);
  }
  Device d;
  try {
    d = Device::parse(spec);
  } catch (const ValueError& e) {
    HEARTH_THROW(DeviceError, "[trainer] device '", spec, "' is not a device: ", e.what(), use_instead());
  }
  if (d.is_cpu()) return {d, "cpu (device is cpu)"};
  // "cuda" without an index: each process of a launch takes its own device.
  if (spec.find(':') == std::string::npos) d.index = local_rank();
  DeviceRuntime& rt = device_runtime(d.kind);
  const std::string& kind = device_kind_name(d.kind);
  if (!rt.is_available() || rt.device_count() == 0) {
    std::string why = rt.is_available() ? "no " + kind + " device found" : rt.unavailable_reason();
    while (!why.empty() && (why.back() == '.' || why.back() == ' ')) why.pop_back();
    HEARTH_THROW(DeviceError, "[trainer] accelerator '", kind, "' is not available on this system (", why, ")",
                 use_instead());
  }
  HEARTH_CHECK(d.index < rt.device_count(), DeviceError, "[trainer] device '", d.str(),
               "' is not available on this system (", count_of(rt.device_count(), kind + " device"),
               " visible: ", list_devices(d.kind), ")", use_instead());
  return {d, describe_device(d)};
}

}  // namespace hearth::train
