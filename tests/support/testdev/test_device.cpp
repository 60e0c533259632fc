#include "tests/support/test_device.h"

#include "tests/support/testdev/kernels.h"
#include "tests/support/testdev/runtime.h"

namespace hearth::testing {

DeviceKind test_device_kind() {
  static DeviceKind kind = [] {
    DeviceKind k = register_device_kind("testdev");
    register_device_runtime(k, make_testdev_runtime());
    register_testdev_kernels(k);
    return k;
  }();
  return kind;
}

ScopedOpRemoval::ScopedOpRemoval(std::vector<OpId> without_kernels, std::vector<std::pair<OpId, DTypeSet>> only_dtypes,
                                 std::vector<OpId> without_compositions, DeviceKind kind)
    : kind_(kind) {
  for (OpId op : without_kernels) {
    kernels_.emplace_back(op, find_op(op)->kernels[kind.id]);
    unregister_kernel(op, kind);
  }
  for (const auto& [op, dtypes] : only_dtypes) {
    const KernelEntry k = find_op(op)->kernels[kind.id];
    kernels_.emplace_back(op, k);
    register_kernel(op, kind, k.fn, dtypes, k.file);
  }
  for (OpId op : without_compositions) {
    compositions_.emplace_back(op, find_op(op)->composition);
    register_composition(op, nullptr);
  }
}

ScopedOpRemoval::~ScopedOpRemoval() {
  // In reverse, so that an op changed twice ends as it began.
  for (auto it = kernels_.rbegin(); it != kernels_.rend(); ++it) {
    const auto& [op, k] = *it;
    unregister_kernel(op, kind_);
    if (k.fn) register_kernel(op, kind_, k.fn, k.dtypes, k.file);
    if (k.check) register_kernel_check(op, kind_, k.check);
  }
  for (auto it = compositions_.rbegin(); it != compositions_.rend(); ++it) register_composition(it->first, it->second);
}

}  // namespace hearth::testing
