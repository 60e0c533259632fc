// linear's weight and bias gradients written straight into destinations the
// autograd engine hands over (Node::gradient_destination): under autocast, a
// float32 parameter's .grad, written by the bfloat16/float16 GEMM itself with
// a float32 output (where the backend's GEMM writes float32 from half inputs), instead of a half
// gradient that the leaf then widens with a copy. See fp32_weight_grads_enabled
// in linalg.h.
#pragma once

#include <utility>

#include "hearth/autograd/node.h"

namespace hearth::detail {

// Whether linear, recording its backward, declares that it can write its
// weight and bias gradients into destinations of `dtype` (the switch is on
// and the product runs in bfloat16 or float16 for a float32 destination).
bool linear_writes_float32_grads(DType dtype);

// Inside linear's backward, g [rows, n] and x [rows, k] detached: the weight
// gradient g^T x written into `weight` (contiguous [n, k], added to its values
// when it accumulates) and returned as weight.tensor. When `bias_wanted`, also
// the bias gradient (the sums of g's rows): into `bias` when defined, else a
// float32 tensor of its own; from the weight gradient's epilogue where the
// backend can (fused_bias_grad_enabled), otherwise undefined when `bias` is
// too, for the caller's own product. Where the backend takes no float32 output
// for g's dtype, the gradient is computed in g's dtype and copied (or added)
// into the destination, as the leaf would have.
std::pair<Tensor, Tensor> linear_grads_into(const Tensor& g, const Tensor& x, const autograd::GradDestination& weight,
                                            const autograd::GradDestination& bias, bool bias_wanted);

// The bias gradient alone (the sums of g's rows) written into `bias`, as a
// product of a row of ones with g with a float32 output; returns bias.tensor.
Tensor bias_grad_into(const Tensor& g, const autograd::GradDestination& bias);

// Counts a bias gradient computed in a weight gradient's epilogue
// (fused_bias_grad_count, linalg.h; defined in matmul.cpp).
void note_fused_bias_grad();

}  // namespace hearth::detail
