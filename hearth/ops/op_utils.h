// Shared plumbing for the functional layer: allocate outputs, pack a call,
// dispatch it. Every op file uses these so validation lives once, here and in
// the op, never in backends.
#pragma once

#include <vector>

#include "hearth/dispatch/dispatch.h"

namespace hearth::detail {

// Looks the op up once (static local in each op file) and defines it if no
// backend registered it yet. mutated_stride: see OpDef.
OpHandle op_handle(const char* name, std::vector<int> mutated_inputs = {}, int mutated_stride = 0);

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

// Throws ShapeError/TypeError in the house format when a check fails.
void check_defined(const char* op, const Tensor& t, const char* arg);
void check_floating(const char* op, const Tensor& t, const char* arg);
void check_dim(const char* op, const Tensor& t, int64_t ndim, const char* arg);
void check_same_dtype(const char* op, const Tensor& a, const Tensor& b);
// In-place ops on leaves that require grad are refused (as in PyTorch).
void check_inplace_allowed(const char* op, const Tensor& t);

}  // namespace hearth::detail
