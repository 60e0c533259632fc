// Matrix products: every product is one batched GEMM (the bmm op), which each
// backend computes with its own library or kernel.
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
// weight gradient's product, where the backend's bmm kernel takes the a_sums
// operand (an accelerator's GEMM epilogue; the CPU sums beside its GEMM),
// instead of as a product of its own
// with a row of ones. On unless set_fused_bias_grad_enabled(false) (tests
// compare both paths in one process).
bool fused_bias_grad_enabled();
void set_fused_bias_grad_enabled(bool on);
// How many bias gradients linear's backward has so computed since the process
// started (for tests and measurements: whether the fused path ran at all).
uint64_t fused_bias_grad_count();

// Whether linear's backward under autocast writes the weight and bias
// gradients of float32 parameters straight into their float32 .grad: the
// bfloat16/float16 GEMM outputs float32 (accumulating in float32 as before,
// rounded once to float32 instead of to the half type and then widened by a
// copy), adding into .grad when it already holds a sum (gradient accumulation).
// The gradients are then more precise than the half-precision ones by that
// one rounding. Only where the engine can hand .grad over (the parameter's
// only use in the step, nobody else holding .grad: autograd/engine.cpp) and
// the backend takes a float32 output; elsewhere the plain path. On unless
// set_fp32_weight_grads_enabled(false), which applies to linears recorded after it.
// autograd::gradient_destinations_written() counts the gradients so written.
bool fp32_weight_grads_enabled();
void set_fp32_weight_grads_enabled(bool on);

}  // namespace hearth
