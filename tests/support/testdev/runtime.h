// testdev's runtime (tests/support/test_device.h): device memory is host
// memory, so copies are memcpy and the CPU's kernels are correct on it.
#pragma once

#include <memory>

#include "hearth/core/device_runtime.h"

namespace hearth::testing {

std::unique_ptr<DeviceRuntime> make_testdev_runtime();

}  // namespace hearth::testing
