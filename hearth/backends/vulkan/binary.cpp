// add, sub, mul, div on Vulkan (shaders/elementwise.comp). Integers and bool
// compute in int64 (bool: add is or, sub is xor, mul is and, as stored back).
#include "hearth/dispatch/schemas/binary.h"

#include "hearth/backends/vulkan/elementwise.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

template <int Op>
void binary_kernel(OpCall& call) {
  const Tensor& out = call.out(0);
  std::vector<Tensor> inputs = {call.in(0), call.in(1)};
  const bool integer = integral_operands(out, inputs);
  ElementwiseScalars s;
  if constexpr (Op == EW_ADD || Op == EW_SUB) {
    const Scalar& alpha = call.attrs<AlphaAttrs>().alpha;
    s.s0 = integer ? Scalar(alpha.to<int64_t>()) : Scalar(alpha.to_double());
  }
  run_elementwise(Op, out, inputs, integer, s);
}

HEARTH_REGISTER_KERNEL(add, vulkan_kind(), binary_kernel<EW_ADD>, elementwise_dtypes());
HEARTH_REGISTER_KERNEL(sub, vulkan_kind(), binary_kernel<EW_SUB>, elementwise_dtypes());
HEARTH_REGISTER_KERNEL(mul, vulkan_kind(), binary_kernel<EW_MUL>, elementwise_dtypes());
HEARTH_REGISTER_KERNEL(div, vulkan_kind(), binary_kernel<EW_DIV>,
                       {DType::float32, DType::float64, DType::float16, DType::bfloat16});

}  // namespace
}  // namespace hearth::vulkan
