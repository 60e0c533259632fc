// A device kind for tests only: "testdev", backed by host memory, implementing
// a handful of ops. It stands in for an accelerator in CI (which has no GPU) to
// prove dispatch, the CPU fallback, and device-mismatch errors.
#pragma once

#include "hearth/core/device.h"

namespace hearth::testing {

// Registers the kind, its runtime and its few kernels (idempotent) and returns it.
DeviceKind test_device_kind();
inline Device test_device() { return Device(test_device_kind(), 0); }

}  // namespace hearth::testing
