// softmax, log_softmax and their backwards on Vulkan (shaders/softmax.comp),
// float32 (16-bit floats on widened copies: half_widening.h), along D of dense
// [outer, D, inner].
#include <algorithm>

#include "hearth/backends/vulkan/half_widening.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

template <uint32_t Op>
void softmax_kernel(OpCall& call) {
  const Tensor& out = call.out(0);
  const Tensor& a = call.in(0);
  const Tensor b = Op >= 2 ? call.in(1) : Tensor();
  const Shape& s = a.shape();
  const int64_t outer = s[0], dim = s[1], inner = s.size() > 2 ? s[2] : 1;
  if (out.numel() == 0) return;
  Dispatch d("softmax", out.device().index);
  d.tensors = {a, b, out};
  d.spec = {Op};
  d.params.u32(static_cast<uint32_t>(outer)).u32(static_cast<uint32_t>(dim)).u32(static_cast<uint32_t>(inner));
  d.use_row_workgroup(dim);
  d.groups_x = static_cast<uint32_t>(std::min<int64_t>(outer * inner, device_limits(d.device).max_groups_x));
  d.run();
}

// float16 and bfloat16 through float32 copies (half_widening.h).
const DTypeSet kFloat = {DType::float32, DType::float16, DType::bfloat16};

HEARTH_REGISTER_KERNEL(softmax, vulkan_kind(), (widened<OpId::softmax, softmax_kernel<0>>), kFloat);
HEARTH_REGISTER_KERNEL(log_softmax, vulkan_kind(), (widened<OpId::log_softmax, softmax_kernel<1>>), kFloat);
HEARTH_REGISTER_KERNEL(softmax_backward, vulkan_kind(), (widened<OpId::softmax_backward, softmax_kernel<2>>), kFloat);
HEARTH_REGISTER_KERNEL(log_softmax_backward, vulkan_kind(), (widened<OpId::log_softmax_backward, softmax_kernel<3>>),
                       kFloat);

}  // namespace
}  // namespace hearth::vulkan
