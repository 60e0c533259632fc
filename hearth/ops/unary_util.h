// The forward half every unary elementwise op shares: pick the dtype, cast the
// input to it, allocate the output and dispatch. Autograd stays in each op.
#pragma once

#include "hearth/ops/elementwise.h"
#include "hearth/ops/op_utils.h"

namespace hearth::detail {

// Float-valued ops (exp, sqrt, ...) on integers and bool compute in float32, as
// PyTorch's int-to-float promotion does.
inline DType float_op_dtype(DType t) { return is_floating(t) ? t : DType::float32; }

// out = op(a) in `dtype`, with the input cast to `dtype` first.
inline Tensor unary_forward(OpHandle op, const Tensor& a, DType dtype, DType out_dtype) {
  Tensor out = empty_like_inputs(a.shape(), out_dtype, a.device(), {a});
  if (out.numel() > 0) run(op, {a.dtype() == dtype ? a.detach() : cast(a.detach(), dtype)}, {out});
  return out;
}
inline Tensor unary_forward(OpHandle op, const Tensor& a, DType dtype) { return unary_forward(op, a, dtype, dtype); }

template <typename A>
Tensor unary_forward(OpHandle op, const Tensor& a, DType dtype, const A& attrs) {
  Tensor out = empty_like_inputs(a.shape(), dtype, a.device(), {a});
  if (out.numel() > 0) run(op, {a.dtype() == dtype ? a.detach() : cast(a.detach(), dtype)}, {out}, attrs);
  return out;
}

}  // namespace hearth::detail
