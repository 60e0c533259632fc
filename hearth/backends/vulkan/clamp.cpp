// clamp on Vulkan (shaders/elementwise.comp); an absent bound is not applied.
#include "hearth/dispatch/schemas/clamp.h"

#include "hearth/backends/vulkan/elementwise.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

void clamp_kernel(OpCall& call) {
  const ClampAttrs& at = call.attrs<ClampAttrs>();
  const Tensor& out = call.out(0);
  const bool integer = !out.is_floating_point();
  ElementwiseScalars s;
  s.s0 = integer ? Scalar(at.min.to<int64_t>()) : Scalar(at.min.to_double());
  s.s1 = integer ? Scalar(at.max.to<int64_t>()) : Scalar(at.max.to_double());
  s.flags = (at.has_min ? 1u : 0u) | (at.has_max ? 2u : 0u);
  run_elementwise(EW_CLAMP, out, {call.in(0)}, integer, s);
}

HEARTH_REGISTER_KERNEL(clamp, vulkan_kind(), clamp_kernel,
                       {DType::float32, DType::float64, DType::float16, DType::bfloat16, DType::int64, DType::int32,
                        DType::uint8});

}  // namespace
}  // namespace hearth::vulkan
