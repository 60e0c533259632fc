// Elementwise math with broadcasting and PyTorch's type promotion.
#pragma once

#include "hearth/core/tensor.h"

namespace hearth {

// Binary arithmetic. `alpha` scales the second operand (torch.add's alpha).
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);  // true division: integers give float32
Tensor add(const Tensor& a, const Scalar& b);
Tensor sub(const Tensor& a, const Scalar& b);
Tensor mul(const Tensor& a, const Scalar& b);
Tensor div(const Tensor& a, const Scalar& b);
Tensor rsub(const Tensor& a, const Scalar& b);  // b - a
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor pow(const Tensor& a, const Scalar& exponent);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);

// Unary.
Tensor neg(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor rsqrt(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor relu(const Tensor& a);
// relu's backward: grad where y = relu(x) > 0, else 0, in one pass.
Tensor relu_backward(const Tensor& grad, const Tensor& y);
// approximate = "none" (erf) or "tanh".
Tensor gelu(const Tensor& a, const std::string& approximate = "none");
Tensor silu(const Tensor& a);
Tensor sign(const Tensor& a);
Tensor square(const Tensor& a);

Tensor clamp(const Tensor& a, const Scalar& min, const Scalar& max);
Tensor clamp_min(const Tensor& a, const Scalar& min);
Tensor clamp_max(const Tensor& a, const Scalar& max);
// cond ? a : b, broadcasting all three; cond is bool.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b);
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& value);

// Comparisons and logic: results are bool.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Scalar& b);
Tensor ne(const Tensor& a, const Scalar& b);
Tensor lt(const Tensor& a, const Scalar& b);
Tensor le(const Tensor& a, const Scalar& b);
Tensor gt(const Tensor& a, const Scalar& b);
Tensor ge(const Tensor& a, const Scalar& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);
Tensor isnan(const Tensor& a);
Tensor isfinite(const Tensor& a);

// Conversion (differentiable between floating dtypes).
Tensor cast(const Tensor& a, DType dtype);

// In place; bump the version counter. `a` must have the broadcast result's shape.
const Tensor& add_(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
const Tensor& sub_(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
const Tensor& mul_(const Tensor& a, const Tensor& b);
const Tensor& mul_(const Tensor& a, const Scalar& b);
const Tensor& div_(const Tensor& a, const Scalar& b);
const Tensor& clamp_(const Tensor& a, const Scalar& min, const Scalar& max);
const Tensor& masked_fill_(const Tensor& a, const Tensor& mask, const Scalar& value);
// Writes src (broadcast to dst's shape, cast to dst's dtype) into dst; any devices.
const Tensor& copy_(const Tensor& dst, const Tensor& src);
const Tensor& fill_(const Tensor& t, const Scalar& value);
const Tensor& zero_(const Tensor& t);

}  // namespace hearth
