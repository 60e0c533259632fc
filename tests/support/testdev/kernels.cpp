#include "tests/support/testdev/kernels.h"

#include "hearth/dispatch/registry.h"

namespace hearth::testing {

void register_testdev_kernels(DeviceKind kind) {
  for (const OpInfo& info : all_op_infos()) {
    if (info.is_fusion) continue;
    // The CPU's kernel, borrowed: testdev's memory is host memory.
    const KernelEntry& cpu = find_op(info.id)->kernels[kCpu.id];
    if (!cpu.fn) continue;
    register_kernel(info.id, kind, cpu.fn, cpu.dtypes, __FILE__);
    if (cpu.check) register_kernel_check(info.id, kind, cpu.check);
  }
}

}  // namespace hearth::testing
