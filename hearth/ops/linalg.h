// Matrix products (OpenBLAS on the CPU, cuBLASLt on CUDA).
#pragma once

#include <cstdint>

#include "hearth/core/tensor.h"

namespace hearth {

// torch.matmul semantics: 1-D, 2-D, and batched with broadcasting of batch dims.
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);   // [m,k] x [k,n]
Tensor bmm(const Tensor& a, const Tensor& b);  // [b,m,k] x [b,k,n]
// x @ weight^T + bias, weight [out, in], x [..., in]; bias optional.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

// Whether linear's backward, when the weight and the bias both need gradients,
// computes the bias gradient (the sum of the output gradient's rows) inside the
// weight gradient's product, where the backend can (cuBLASLt's BGRADB epilogue
// on CUDA; the CPU sums beside its GEMM), instead of as a product of its own
// with a row of ones. Read once from HEARTH_FUSED_BIAS_GRAD (unset is on, 0
// turns it off), or the last set_fused_bias_grad_enabled() (tests compare
// both paths in one process).
bool fused_bias_grad_enabled();
void set_fused_bias_grad_enabled(bool on);
// How many bias gradients linear's backward has so computed since the process
// started (for tests and measurements: whether the fused path ran at all).
uint64_t fused_bias_grad_count();

}  // namespace hearth
