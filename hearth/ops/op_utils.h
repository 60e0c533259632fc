// Shared plumbing for the functional layer: allocate outputs, pack a call,
// dispatch it. Every op file uses these so validation lives once, here and in
// the op, never in backends.
#pragma once

#include <vector>

#include "hearth/dispatch/dispatch.h"

namespace hearth::detail {

// The registry's entry of a listed op (hearth/dispatch/op_list.h); op files
// keep it in a static local.
inline OpHandle op_handle(OpId op) { return find_op(op); }

// Dispatches `op` with no attributes.
void run(OpHandle op, std::vector<Tensor> inputs, std::vector<Tensor> outputs);
// Dispatches `op` with attributes `attrs` (a struct from hearth/ops/attrs.h).
template <typename A>
void run(OpHandle op, std::vector<Tensor> inputs, std::vector<Tensor> outputs, const A& attrs) {
  OpCall call;
  call.inputs = std::move(inputs);
  call.outputs = std::move(outputs);
  call.set_attrs(attrs);
  dispatch(op, call);
}

// Whether the device's kernel of `op` takes this call (registry.h, accepts()):
// asked before choosing a fused op over the ops it fuses. The tensors' device
// decides the kernel; nothing runs.
template <typename A>
bool accepts(OpHandle op, std::vector<Tensor> inputs, std::vector<Tensor> outputs, const A& attrs) {
  OpCall call;
  call.inputs = std::move(inputs);
  call.outputs = std::move(outputs);
  call.set_attrs(attrs);
  return hearth::accepts(op, common_device(op->def.name.c_str(), call.inputs).kind, call);
}

// accepts() for an op without attributes.
bool accepts(OpHandle op, std::vector<Tensor> inputs, std::vector<Tensor> outputs);

// An elementwise output of `shape`, laid out like its inputs as PyTorch does:
// channels_last when the first input of exactly that shape is channels_last
// (so NHWC activations stay NHWC through relu, add, ...), else contiguous.
Tensor empty_like_inputs(const Shape& shape, DType dtype, Device device, const std::vector<Tensor>& inputs);

// Throws ShapeError/TypeError in the house format when a check fails.
void check_defined(const char* op, const Tensor& t, const char* arg);
void check_floating(const char* op, const Tensor& t, const char* arg);
void check_dim(const char* op, const Tensor& t, int64_t ndim, const char* arg);
void check_same_dtype(const char* op, const Tensor& a, const Tensor& b);
// In-place ops on leaves that require grad are refused (as in PyTorch).
void check_inplace_allowed(const char* op, const Tensor& t);

}  // namespace hearth::detail
