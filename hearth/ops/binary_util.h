// The forward half binary elementwise ops share: check both operands, find the
// common device and broadcast shape, cast to the compute dtype and dispatch.
#pragma once

#include "hearth/ops/elementwise.h"
#include "hearth/ops/op_utils.h"

namespace hearth::detail {

inline Tensor detached_as(const Tensor& t, DType d) { return t.dtype() == d ? t.detach() : cast(t.detach(), d); }

// out = op(a, b) with a, b cast to `dtype` and broadcast; out has `dtype`.
inline Tensor binary_forward(const char* name, OpHandle op, const Tensor& a, const Tensor& b, DType dtype) {
  check_defined(name, a, "input");
  check_defined(name, b, "other");
  Device device = common_device(name, {a, b});
  Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  Tensor out = empty_like_inputs(shape, dtype, device, {a, b});
  if (out.numel() > 0) run(op, {detached_as(a, dtype), detached_as(b, dtype)}, {out});
  return out;
}

}  // namespace hearth::detail
