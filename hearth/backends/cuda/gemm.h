// Batched matrix products on CUDA through cuBLASLt.
#pragma once

#include "hearth/core/tensor.h"

namespace hearth::cuda {

// out[b] = a[b] @ b[b] (+ bias over out's columns, when defined) (+ partial[b],
// when defined) for a [B, M, K], b [B, K, N], out and partial [B, M, N]
// contiguous, bias [N]; operand layouts as in hearth/dispatch/schemas/matmul.h.
// The bias rides cuBLASLt's epilogue, the partial its C operand (beta = 1;
// partial may be out itself). a_sums [M] (B = 1, without bias and partial):
// also a's sums over K, linear's bias gradient beside its weight gradient, in
// cuBLASLt's BGRADB epilogue where it has one (gemm_fuses_a_sums), else by a
// small kernel after the product. out (and with it partial, bias and a_sums)
// may be float32 for bfloat16/float16 a and b: cuBLASLt's C and D in float32.
void gemm_batched(const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& bias = Tensor(),
                  const Tensor& partial = Tensor(), const Tensor& a_sums = Tensor());

// Whether gemm_batched(a, b, out, {}, {}, a_sums) computes a_sums in the GEMM's
// epilogue: cuBLASLt's heuristic found an algorithm with it for this problem
// (planned now and cached, so the call that follows reuses the plan).
bool gemm_fuses_a_sums(const Tensor& a, const Tensor& b, const Tensor& out, const Tensor& a_sums);

// TF32 tensor cores for float32 products: the backend options' float32 matmul
// precision is "high" or "medium" (this backend has no bf16-class float32
// path, so medium computes as high). Read at every call; plans key on it.
bool tf32_allowed();

}  // namespace hearth::cuda
