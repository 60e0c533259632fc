// Operands of the bmm op (hearth/dispatch/schemas/matmul.h) as the functional
// layer prepares them: matmul.cpp's products and linear's gradients written
// into their destinations (linear_grad_into.cpp) share the rule.
#pragma once

#include "hearth/core/tensor.h"

namespace hearth::detail {

// `t` ([B, R, C], detached) restrided to a layout the bmm contract accepts:
// strides of size-1 dims are free, so they are chosen to fit; anything else
// that fits neither row- nor column-major is copied.
Tensor blas_operand(const Tensor& t);

}  // namespace hearth::detail
