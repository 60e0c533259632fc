// The host side of the elementwise kernel (shaders/elementwise.comp): every
// op of the unary, activation, binary, maximum, compare, where, clamp, pow
// and copy families is one call of run_elementwise with its op code.
#pragma once

#include <cstdint>
#include <vector>

#include "hearth/backends/vulkan/shaders/elementwise_ops.h"
#include "hearth/core/scalar.h"
#include "hearth/core/tensor.h"

namespace hearth::vulkan {

// Scalars the op reads (EW_ADD/EW_SUB: s0 = alpha; EW_FILL: s0; EW_CLAMP:
// s0, s1 and flags bits 0 and 1; EW_GELU*: flags bit 0 = tanh approximation).
struct ElementwiseScalars {
  Scalar s0 = 0;
  Scalar s1 = 0;
  uint32_t flags = 0;
};

// out = op(inputs...), inputs broadcast to out's shape (stride 0 on broadcast
// dims, or fewer dims, aligned to the right); any operand may be strided.
// Computes in int64 when `integer_math`, else in float32 (float64 when an
// operand is float64).
void run_elementwise(int op, const Tensor& out, const std::vector<Tensor>& inputs, bool integer_math,
                     const ElementwiseScalars& scalars = {});

// Integer math when no operand is floating.
bool integral_operands(const Tensor& out, const std::vector<Tensor>& inputs);

// The dtypes the elementwise kernel reads and writes (float64 only on
// devices with shaderFloat64, float16 and bfloat16 only on devices with
// shaderFloat16 and 16-bit storage: run_elementwise throws
// NotImplementedError elsewhere).
DTypeSet elementwise_dtypes();

}  // namespace hearth::vulkan
