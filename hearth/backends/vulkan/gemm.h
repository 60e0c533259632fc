// The tiled shared-memory GEMM (shaders/gemm.comp), for bmm and for
// convolutions computed as products of column matrices.
#pragma once

#include "hearth/core/tensor.h"

namespace hearth::vulkan {

// out [B, M, N] (dense) = a [B, M, K] @ b [B, K, N] (+ bias [N]) (+ partial
// [B, M, N], dense), accumulated in float32; each operand float32, float16 or
// bfloat16 (16-bit floats need the device's half support: NotImplementedError
// elsewhere).
// a and b are read through their strides (any, batch stride 0 to broadcast
// one over the batch).
void run_gemm(const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& bias, const Tensor& partial);

}  // namespace hearth::vulkan
