// Elementwise maximum and minimum on Vulkan, NaN-propagating (shaders/elementwise.comp).
#include "hearth/backends/vulkan/elementwise.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

template <int Op>
void maximum_kernel(OpCall& call) {
  std::vector<Tensor> inputs = {call.in(0), call.in(1)};
  run_elementwise(Op, call.out(0), inputs, integral_operands(call.out(0), inputs));
}

HEARTH_REGISTER_KERNEL(maximum, vulkan_kind(), maximum_kernel<EW_MAXIMUM>, elementwise_dtypes());
HEARTH_REGISTER_KERNEL(minimum, vulkan_kind(), maximum_kernel<EW_MINIMUM>, elementwise_dtypes());

}  // namespace
}  // namespace hearth::vulkan
