// The op registry: every op is defined once by name (hearth/ops) and implemented
// per device kind by registering kernels (hearth/backends/*). Support is a table
// lookup, so dispatch decides before running anything.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "hearth/core/device.h"
#include "hearth/core/dtype.h"
#include "hearth/dispatch/op_call.h"

namespace hearth {

struct KernelEntry {
  KernelFn fn = nullptr;
  DTypeSet dtypes;  // dtypes of the op's first input that this kernel handles
};

struct OpDef {
  std::string name;
  // Inputs the kernel writes in place besides its outputs (batch_norm's running
  // statistics, optimizer state); the CPU fallback copies them back.
  std::vector<int> mutated_inputs;
  // > 0 for ops over a list of equal groups of inputs (the optimizers' foreach
  // steps): mutated_inputs then name positions within the first group and
  // repeat every mutated_stride inputs.
  int mutated_stride = 0;
};

struct OpEntry {
  OpDef def;
  bool defined = false;  // set by define_op; kernels may register first
  std::array<KernelEntry, kMaxDeviceKinds> kernels{};
};

using OpHandle = OpEntry*;

// Both are idempotent on the name and safe to call from static initialisers in
// any order. Redefining or re-registering replaces.
OpHandle define_op(OpDef def);
OpHandle register_kernel(const std::string& op, DeviceKind kind, KernelFn fn, DTypeSet dtypes);
// Removes a kernel (tests use it to simulate a backend without an op).
void unregister_kernel(const std::string& op, DeviceKind kind);

OpHandle find_op(const std::string& name);  // nullptr if unknown
std::vector<OpHandle> all_ops();            // sorted by name

bool supports(OpHandle op, DeviceKind kind, DType dtype);

// Static registration helpers for backends: HEARTH_REGISTER_KERNEL(add, kCpu, cpu_add, DTypeSet::all());
struct KernelRegistrar {
  KernelRegistrar(const char* op, DeviceKind kind, KernelFn fn, DTypeSet dtypes) {
    register_kernel(op, kind, fn, dtypes);
  }
};

}  // namespace hearth
