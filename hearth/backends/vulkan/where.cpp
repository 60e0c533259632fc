// where on Vulkan (shaders/elementwise.comp): out = cond ? a : b.
#include "hearth/backends/vulkan/elementwise.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

void where_kernel(OpCall& call) {
  std::vector<Tensor> inputs = {call.in(0), call.in(1), call.in(2)};
  run_elementwise(EW_WHERE, call.out(0), inputs, integral_operands(call.out(0), {call.in(0), call.in(1)}));
}

HEARTH_REGISTER_KERNEL(where, vulkan_kind(), where_kernel, elementwise_dtypes());

}  // namespace
}  // namespace hearth::vulkan
