// float16 and bfloat16 for the kernels whose shaders compute in float32 only
// (convolution, batch norm, pooling, softmax, layer norm, losses, dropout,
// optimizer steps): the call's 16-bit tensors are widened to float32 copies
// on the device, the float32 kernel runs on them, and its 16-bit results are
// rounded back once. That is the CPU's own rule for half inputs (compute in
// float32, round the result), so results agree with it as a native half
// shader's would, at the price of a copy of each 16-bit tensor each way. The
// hot paths (elementwise ops and casts, GEMMs, row reductions) have half
// shaders of their own instead.
#pragma once

#include "hearth/core/tensor.h"
#include "hearth/dispatch/op_call.h"
#include "hearth/dispatch/op_info.h"

namespace hearth::vulkan {

// Runs `float_kernel` on `call`; where a tensor of the call is float16 or
// bfloat16 (and the device has half support, else NotImplementedError), on
// float32 copies, copying back the outputs and the inputs `op` writes in place.
void run_widened(OpCall& call, KernelFn float_kernel, OpId op);

// The pieces, for kernels that widen by hand: a float32 copy of `t` on its
// device (its dims in t's memory order), and `wide`'s values rounded into
// `narrow` (float16 or bfloat16, the same shape).
Tensor widen(const Tensor& t);
void narrow_into(const Tensor& narrow, const Tensor& wide);

template <OpId Op, KernelFn Fn>
void widened(OpCall& call) {
  run_widened(call, Fn, Op);
}

}  // namespace hearth::vulkan
