// testdev's kernels (tests/support/test_device.h).
#pragma once

#include "hearth/core/device.h"

namespace hearth::testing {

// Registers for `kind` the CPU's kernel of every primitive op of
// hearth/dispatch/op_list.h, with its dtypes and check, and nothing for the
// fusions: driven by the list's role column, it stays complete as ops are added.
void register_testdev_kernels(DeviceKind kind);

}  // namespace hearth::testing
