// Batched matrix products on CUDA through cuBLASLt.
#pragma once

#include "hearth/core/tensor.h"

namespace hearth::cuda {

// out[b] = a[b] @ b[b] (+ bias over out's columns, when defined) (+ partial[b],
// when defined) for a [B, M, K], b [B, K, N], out and partial [B, M, N]
// contiguous, bias [N]; operand layouts as in hearth/dispatch/schemas/matmul.h.
// The bias rides cuBLASLt's epilogue, the partial its C operand (beta = 1;
// partial may be out itself).
void gemm_batched(const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& bias = Tensor(),
                  const Tensor& partial = Tensor());

// TF32 tensor cores for float32 products: on unless HEARTH_ALLOW_TF32=0
// (cuDNN's convolutions use TF32 by default too).
bool tf32_allowed();

}  // namespace hearth::cuda
