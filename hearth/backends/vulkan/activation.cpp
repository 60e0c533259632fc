// Activations on Vulkan (shaders/elementwise.comp), float32 and the 16-bit floats (relu also integers).
#include "hearth/dispatch/schemas/activation.h"

#include "hearth/backends/vulkan/elementwise.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

template <int Op>
void activation_kernel(OpCall& call) {
  std::vector<Tensor> inputs(call.inputs.begin(), call.inputs.end());
  ElementwiseScalars s;
  if constexpr (Op == EW_GELU || Op == EW_GELU_BACKWARD) s.flags = call.attrs<GeluAttrs>().tanh_approximation ? 1 : 0;
  run_elementwise(Op, call.out(0), inputs, integral_operands(call.out(0), inputs), s);
}

// float16 and bfloat16 in float32, rounded once (elementwise.h).
const DTypeSet kFloat = {DType::float32, DType::float16, DType::bfloat16};

HEARTH_REGISTER_KERNEL(relu, vulkan_kind(), activation_kernel<EW_RELU>,
                       {DType::float32, DType::float16, DType::bfloat16, DType::int64, DType::int32, DType::uint8});
HEARTH_REGISTER_KERNEL(relu_backward, vulkan_kind(), activation_kernel<EW_RELU_BACKWARD>, kFloat);
HEARTH_REGISTER_KERNEL(sigmoid, vulkan_kind(), activation_kernel<EW_SIGMOID>, kFloat);
HEARTH_REGISTER_KERNEL(tanh, vulkan_kind(), activation_kernel<EW_TANH>, kFloat);
HEARTH_REGISTER_KERNEL(silu, vulkan_kind(), activation_kernel<EW_SILU>, kFloat);
HEARTH_REGISTER_KERNEL(gelu, vulkan_kind(), activation_kernel<EW_GELU>, kFloat);
HEARTH_REGISTER_KERNEL(gelu_backward, vulkan_kind(), activation_kernel<EW_GELU_BACKWARD>, kFloat);

}  // namespace
}  // namespace hearth::vulkan
