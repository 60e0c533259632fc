// The op registry: every op of hearth/dispatch/op_list.h is defined at start-up
// from that list, and implemented per device kind by registering kernels
// (hearth/backends/*) under its OpId. Support is a table lookup, so dispatch
// decides before running anything.
//
// A kernel may also register a check: whether it takes one particular call of
// an op that something else could compute instead (a fused op the functional
// layer would otherwise compose of other ops: a fused attention kernel may
// take only some shapes and dtypes). Dispatch never asks it; the functional
// layer asks it, through accepts(), before it chooses the fused op.
//
// A fusion (op_list.h's role column) also has a composition: a function of the
// ops layer that computes the fused op's outputs, auxiliary ones included, with
// primitive ops on the call's own device. Dispatch runs it where the device
// has no kernel for the fusion, so a backend of primitives alone trains every
// model; dispatch counts these calls (composed_calls(), hearth/dispatch/dispatch.h).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "hearth/core/device.h"
#include "hearth/core/dtype.h"
#include "hearth/dispatch/op_call.h"
#include "hearth/dispatch/op_info.h"

namespace hearth {

// Whether a kernel takes a call (see above); the call's outputs are allocated.
using KernelCheck = bool (*)(const OpCall&);
// Computes a fusion's call with primitive ops on its device (see above).
using Composition = void (*)(OpCall&);

struct KernelEntry {
  KernelFn fn = nullptr;
  DTypeSet dtypes;              // dtypes of the op's first input that this kernel handles
  KernelCheck check = nullptr;  // none: it takes every call of those dtypes
  const char* file = nullptr;   // the source file that registered it (its __FILE__), if known
};

// An op's definition. For the listed ops it comes from their row of op_list.h;
// define_op() also takes ops the list does not name (tests define their own).
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
  const OpInfo* info = nullptr;  // its row of op_list.h; null for an op defined at run time
  std::array<KernelEntry, kMaxDeviceKinds> kernels{};
  Composition composition = nullptr;  // a fusion's composition of primitives
};

using OpHandle = OpEntry*;

// A listed op; never null (every listed op is defined before any lookup).
OpHandle find_op(OpId op);
// Registering a kernel keeps a check registered before it (static
// initialisers run in any order); unregistering removes both.
// `file` is the registering source's __FILE__ (HEARTH_REGISTER_KERNEL passes it).
OpHandle register_kernel(OpId op, DeviceKind kind, KernelFn fn, DTypeSet dtypes, const char* file = nullptr);
OpHandle register_kernel_check(OpId op, DeviceKind kind, KernelCheck check);
void unregister_kernel(OpId op, DeviceKind kind);
// A fusion's composition (only fusions take one: a primitive has no other way).
OpHandle register_composition(OpId op, Composition composition);

// Whether the op is a fusion of op_list.h (an op defined at run time is not).
bool is_fusion(OpHandle op);
// The kernel's source file relative to the source tree ("hearth/backends/cpu/
// unary.cpp"), or "" when no kernel is registered or its file is unknown.
std::string kernel_source_file(OpHandle op, DeviceKind kind);

// By name: for the CLI, the fallback's messages and tests. All are idempotent
// on the name and safe to call from static initialisers in any order.
// Redefining or re-registering replaces.
OpHandle define_op(OpDef def);
OpHandle register_kernel(const std::string& op, DeviceKind kind, KernelFn fn, DTypeSet dtypes);
// Removes a kernel (tests use it to simulate a backend without an op).
void unregister_kernel(const std::string& op, DeviceKind kind);

OpHandle find_op(const std::string& name);  // nullptr if unknown
std::vector<OpHandle> all_ops();            // sorted by name

bool supports(OpHandle op, DeviceKind kind, DType dtype);
// supports() for the call's key dtype, and the kernel's check, if it has one.
bool accepts(OpHandle op, DeviceKind kind, const OpCall& call);

// Static registration for backends, by the op's symbol:
//   HEARTH_REGISTER_KERNEL(layer_norm, kCpu, layer_norm_kernel, DTypeSet::floating());
// registers layer_norm_kernel for OpId::layer_norm at start-up.
struct KernelRegistrar {
  KernelRegistrar(OpId op, DeviceKind kind, KernelFn fn, DTypeSet dtypes, const char* file = nullptr) {
    register_kernel(op, kind, fn, dtypes, file);
  }
};
struct CompositionRegistrar {
  CompositionRegistrar(OpId op, Composition composition) { register_composition(op, composition); }
};
struct KernelCheckRegistrar {
  KernelCheckRegistrar(OpId op, DeviceKind kind, KernelCheck check) { register_kernel_check(op, kind, check); }
};

}  // namespace hearth

// The kernel argument may hold commas (a template's arguments): it and the
// dtypes travel as __VA_ARGS__.
#define HEARTH_REGISTER_KERNEL(op, kind, ...) \
  const ::hearth::KernelRegistrar hearth_kernel_registrar_##op(::hearth::OpId::op, kind, __VA_ARGS__, __FILE__)
// A kernel's check (KernelCheck), by the op's symbol, beside its kernel.
#define HEARTH_REGISTER_KERNEL_CHECK(op, kind, check) \
  const ::hearth::KernelCheckRegistrar hearth_kernel_check_registrar_##op(::hearth::OpId::op, kind, check)
// A fusion's composition, by the op's symbol, beside the family's functional code.
#define HEARTH_REGISTER_COMPOSITION(op, composition) \
  const ::hearth::CompositionRegistrar hearth_composition_registrar_##op(::hearth::OpId::op, composition)
