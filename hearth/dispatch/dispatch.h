// The one place that decides where an op runs: on its tensors' device when that
// backend supports it; for a fusion the device has no kernel for, its
// composition of primitives on that same device; else on the CPU when
// HEARTH_ENABLE_CPU_FALLBACK=1, else a NotImplementedError that names the op,
// the device and the way out.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hearth/dispatch/registry.h"

namespace hearth {

// Runs the call. Inputs and outputs must share one device (checked; the error
// names the op and the argument).
void dispatch(OpHandle op, OpCall& call);

// The device shared by all defined tensors; DeviceError otherwise:
// "[matmul] expected all tensors on cuda:0, but argument 2 is on cpu".
Device common_device(const char* op, const std::vector<Tensor>& tensors);

// A contiguous copy of `src` on `device` (same dtype); `src` itself when it is
// already contiguous there.
Tensor transfer(const Tensor& src, Device device);
// Writes src into dst (same shape; dtype cast), across devices if need be.
void copy_into(const Tensor& dst, const Tensor& src);

struct FallbackStats {
  int64_t calls = 0;
  int64_t bytes_to_cpu = 0;
  int64_t bytes_from_cpu = 0;
};
// Per op name, since the process started (or the last reset).
std::map<std::string, FallbackStats> fallback_stats();
void reset_fallback_stats();  // also forgets which ops already warned
// A table of the above, or an empty string when nothing fell back.
std::string fallback_report();

// Calls of fusions run as their composition (a device without the fused
// kernel), per op name, since the process started (or the last reset); apart
// from the CPU fallback's counts, which they never add to.
std::map<std::string, int64_t> composed_calls();
void reset_composed_calls();
// A table of the above, or an empty string when nothing was composed.
std::string composed_report();

// Whether HEARTH_ENABLE_CPU_FALLBACK is set to a true value (read every call).
bool cpu_fallback_enabled();

}  // namespace hearth
