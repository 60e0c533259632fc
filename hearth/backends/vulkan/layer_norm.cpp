// layer_norm and its backward on Vulkan (shaders/layer_norm.comp), float32
// (16-bit floats on widened copies: half_widening.h),
// over dense rows: one workgroup per row, and one per column for the weight
// and bias gradients.
#include "hearth/dispatch/schemas/layer_norm.h"

#include <algorithm>

#include "hearth/backends/vulkan/half_widening.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

Tensor optional(const std::vector<Tensor>& v, size_t i) { return i < v.size() ? v[i] : Tensor(); }

Dispatch layer_norm_dispatch(uint32_t op, const Tensor& x, uint32_t flags, double eps) {
  const int64_t M = x.size(0), K = x.size(1);
  Dispatch d("layer_norm", x.device().index);
  d.spec = {op};
  d.params.u32(static_cast<uint32_t>(M)).u32(static_cast<uint32_t>(K)).u32(flags).f32(static_cast<float>(eps));
  d.use_row_workgroup(op == 2 ? M : K);
  d.groups_x = static_cast<uint32_t>(std::min<int64_t>(op == 2 ? K : M, device_limits(d.device).max_groups_x));
  return d;
}

void layer_norm_kernel(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor w = optional(call.inputs, 1), b = optional(call.inputs, 2);
  if (x.numel() == 0) return;
  Dispatch d =
      layer_norm_dispatch(0, x, (w.defined() ? 1u : 0u) | (b.defined() ? 2u : 0u), call.attrs<LayerNormAttrs>().eps);
  d.tensors = {x, w, b, call.out(0), call.out(1), call.out(2), Tensor(), Tensor()};
  d.run();
}

void layer_norm_backward_kernel(OpCall& call) {
  const Tensor &g = call.in(0), &x = call.in(1), &mean = call.in(2), &rstd = call.in(3);
  const Tensor w = optional(call.inputs, 4);
  const Tensor gx = optional(call.outputs, 0), gw = optional(call.outputs, 1), gb = optional(call.outputs, 2);
  if (x.numel() == 0) return;
  const uint32_t flags = (w.defined() ? 1u : 0u) | (gw.defined() ? 4u : 0u) | (gb.defined() ? 8u : 0u);
  if (gx.defined()) {
    Dispatch d = layer_norm_dispatch(1, x, flags, 0);
    d.tensors = {g, w, x, gx, mean, rstd, Tensor(), Tensor()};
    d.run();
  }
  if (gw.defined() || gb.defined()) {
    Dispatch d = layer_norm_dispatch(2, x, flags, 0);
    d.tensors = {g, Tensor(), x, Tensor(), mean, rstd, gw, gb};
    d.run();
  }
}

// float16 and bfloat16 through float32 copies (half_widening.h).
const DTypeSet kFloat = {DType::float32, DType::float16, DType::bfloat16};

HEARTH_REGISTER_KERNEL(layer_norm, vulkan_kind(), (widened<OpId::layer_norm, layer_norm_kernel>), kFloat);
HEARTH_REGISTER_KERNEL(layer_norm_backward, vulkan_kind(),
                       (widened<OpId::layer_norm_backward, layer_norm_backward_kernel>), kFloat);

}  // namespace
}  // namespace hearth::vulkan
