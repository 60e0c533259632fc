// A device kind for tests only: "testdev", backed by host memory. It is shaped
// as a real backend is (tests/support/testdev/: its runtime, and the kernels it
// registers), implementing every primitive op of hearth/dispatch/op_list.h and
// no fusion, so it proves what a new backend of primitives alone gets: every
// fusion composed on the device, nothing sent to the CPU. It stands in for an
// accelerator in CI (which has no GPU) to prove dispatch, the compositions,
// the CPU fallback and device-mismatch errors.
#pragma once

#include <utility>
#include <vector>

#include "hearth/core/device.h"
#include "hearth/dispatch/registry.h"

namespace hearth::testing {

// Registers the kind, its runtime and its kernels (idempotent) and returns it.
DeviceKind test_device_kind();
inline Device test_device() { return Device(test_device_kind(), 0); }

// For a scope, a kind (testdev by default) lacks some kernels, or some dtypes
// of them, and some fusions lack their composition; all is restored after.
// Tests of what happens where a backend lacks an op (the CPU fallback, its
// errors, refusals) make the op missing with it.
class ScopedOpRemoval {
 public:
  explicit ScopedOpRemoval(std::vector<OpId> without_kernels, std::vector<std::pair<OpId, DTypeSet>> only_dtypes = {},
                           std::vector<OpId> without_compositions = {}, DeviceKind kind = test_device_kind());
  ~ScopedOpRemoval();
  ScopedOpRemoval(const ScopedOpRemoval&) = delete;
  ScopedOpRemoval& operator=(const ScopedOpRemoval&) = delete;

 private:
  DeviceKind kind_;
  std::vector<std::pair<OpId, KernelEntry>> kernels_;
  std::vector<std::pair<OpId, Composition>> compositions_;
};

}  // namespace hearth::testing
