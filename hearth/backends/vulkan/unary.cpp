// The unary elementwise ops on Vulkan (shaders/elementwise.comp).
#include "hearth/backends/vulkan/elementwise.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

template <int Op>
void unary_kernel(OpCall& call) {
  run_elementwise(Op, call.out(0), {call.in(0)}, integral_operands(call.out(0), {call.in(0)}));
}

// neg, abs, sign, square: all but bool. exp, log: float32 and the 16-bit floats (GLSL
// has no transcendental functions of doubles); sqrt, rsqrt also float64.
const DTypeSet kNumeric = {DType::float32, DType::float64, DType::float16, DType::bfloat16,
                           DType::int64,   DType::int32,   DType::uint8};
const DTypeSet kRoots = {DType::float32, DType::float64, DType::float16, DType::bfloat16};
const DTypeSet kFloat = {DType::float32, DType::float16, DType::bfloat16};

HEARTH_REGISTER_KERNEL(neg, vulkan_kind(), unary_kernel<EW_NEG>, kNumeric);
HEARTH_REGISTER_KERNEL(abs, vulkan_kind(), unary_kernel<EW_ABS>, kNumeric);
HEARTH_REGISTER_KERNEL(sign, vulkan_kind(), unary_kernel<EW_SIGN>, kNumeric);
HEARTH_REGISTER_KERNEL(square, vulkan_kind(), unary_kernel<EW_SQUARE>, kNumeric);
HEARTH_REGISTER_KERNEL(exp, vulkan_kind(), unary_kernel<EW_EXP>, kFloat);
HEARTH_REGISTER_KERNEL(log, vulkan_kind(), unary_kernel<EW_LOG>, kFloat);
HEARTH_REGISTER_KERNEL(sqrt, vulkan_kind(), unary_kernel<EW_SQRT>, kRoots);
HEARTH_REGISTER_KERNEL(rsqrt, vulkan_kind(), unary_kernel<EW_RSQRT>, kRoots);
HEARTH_REGISTER_KERNEL(logical_not, vulkan_kind(), unary_kernel<EW_LOGICAL_NOT>, elementwise_dtypes());
HEARTH_REGISTER_KERNEL(isnan, vulkan_kind(), unary_kernel<EW_ISNAN>, elementwise_dtypes());
HEARTH_REGISTER_KERNEL(isfinite, vulkan_kind(), unary_kernel<EW_ISFINITE>, elementwise_dtypes());

}  // namespace
}  // namespace hearth::vulkan
