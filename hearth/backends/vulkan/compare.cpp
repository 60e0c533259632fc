// Comparisons and logical connectives on Vulkan, bool results
// (shaders/elementwise.comp): in float for float32 inputs, else in int64.
#include "hearth/backends/vulkan/elementwise.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

template <int Op>
void compare_kernel(OpCall& call) {
  std::vector<Tensor> inputs = {call.in(0), call.in(1)};
  run_elementwise(Op, call.out(0), inputs, integral_operands(call.out(0), inputs));
}

HEARTH_REGISTER_KERNEL(eq, vulkan_kind(), compare_kernel<EW_EQ>, elementwise_dtypes());
HEARTH_REGISTER_KERNEL(ne, vulkan_kind(), compare_kernel<EW_NE>, elementwise_dtypes());
HEARTH_REGISTER_KERNEL(lt, vulkan_kind(), compare_kernel<EW_LT>, elementwise_dtypes());
HEARTH_REGISTER_KERNEL(le, vulkan_kind(), compare_kernel<EW_LE>, elementwise_dtypes());
HEARTH_REGISTER_KERNEL(gt, vulkan_kind(), compare_kernel<EW_GT>, elementwise_dtypes());
HEARTH_REGISTER_KERNEL(ge, vulkan_kind(), compare_kernel<EW_GE>, elementwise_dtypes());
HEARTH_REGISTER_KERNEL(logical_and, vulkan_kind(), compare_kernel<EW_LOGICAL_AND>, elementwise_dtypes());
HEARTH_REGISTER_KERNEL(logical_or, vulkan_kind(), compare_kernel<EW_LOGICAL_OR>, elementwise_dtypes());
HEARTH_REGISTER_KERNEL(logical_xor, vulkan_kind(), compare_kernel<EW_LOGICAL_XOR>, elementwise_dtypes());

}  // namespace
}  // namespace hearth::vulkan
