// Matrix products (OpenBLAS on the CPU, cuBLASLt on CUDA).
#pragma once

#include "hearth/core/tensor.h"

namespace hearth {

// torch.matmul semantics: 1-D, 2-D, and batched with broadcasting of batch dims.
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);   // [m,k] x [k,n]
Tensor bmm(const Tensor& a, const Tensor& b);  // [b,m,k] x [b,k,n]
// x @ weight^T + bias, weight [out, in], x [..., in]; bias optional.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

}  // namespace hearth
