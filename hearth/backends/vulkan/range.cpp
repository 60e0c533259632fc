// arange_ on Vulkan (shaders/arange.comp): int64 arithmetic for integer
// dtypes with integer start and step, else float32 (see the shader).
#include "hearth/dispatch/schemas/range.h"

#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

void arange_kernel(OpCall& call) {
  const Tensor& t = call.out(0);
  const RangeAttrs& a = call.attrs<RangeAttrs>();
  const int64_t n = t.numel();
  if (n == 0) return;
  const bool integer = !t.is_floating_point() && a.start.category() != DTypeCategory::floating &&
                       a.step.category() != DTypeCategory::floating;
  Dispatch d("arange", t.device().index);
  d.tensors = {t};
  d.spec = {integer ? 0u : 1u, static_cast<uint32_t>(t.dtype())};
  d.params.u32(static_cast<uint32_t>(n))
      .u64(static_cast<uint64_t>(a.start.to_int()))
      .u64(static_cast<uint64_t>(a.step.to_int()))
      .f32(static_cast<float>(a.start.to_double()))
      .f32(static_cast<float>(a.step.to_double()));
  d.groups_x = d.groups_for(n);
  d.run();
}

HEARTH_REGISTER_KERNEL(arange_, vulkan_kind(), arange_kernel, {DType::float32, DType::int64, DType::int32});

}  // namespace
}  // namespace hearth::vulkan
