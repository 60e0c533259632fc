// batch_norm and its backward on Vulkan (shaders/batch_norm.comp), float32
// with float32 statistics and parameters (16-bit floats on widened copies:
// half_widening.h). The fused forward forms
// (batch_norm_relu, batch_norm_add_relu) are composed by the layer above;
// the backward serves them all: a fused ReLU's mask from its saved output or
// from the forward's affine map, and the residual's gradient when wanted.
#include "hearth/dispatch/schemas/batch_norm.h"

#include <algorithm>

#include "hearth/backends/vulkan/elementwise.h"
#include "hearth/backends/vulkan/half_widening.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"
#include "hearth/ops/factory.h"

namespace hearth::vulkan {
namespace {

Tensor at(const OpCall& call, size_t i, bool output) {
  const auto& v = output ? call.outputs : call.inputs;
  return i < v.size() ? v[i] : Tensor();
}

void check_float(const Tensor& t) {
  HEARTH_CHECK(!t.defined() || t.dtype() == DType::float32, NotImplementedError,
               "[batch_norm] the Vulkan kernel takes float32 tensors and statistics, got ", dtype_name(t.dtype()));
}

Dispatch batch_norm_dispatch(const Tensor& x, uint32_t op, const BatchNormAttrs& a, uint32_t flags) {
  Dispatch d("batch_norm", x.device().index);
  d.spec = {op};
  const Shape& s = x.shape();
  d.params.u32(static_cast<uint32_t>(s[0])).u32(static_cast<uint32_t>(s[1])).u32(static_cast<uint32_t>(s[2]));
  d.params.u32(flags | (a.training ? 1u : 0u) | (a.relu ? 2u : 0u))
      .f32(static_cast<float>(a.momentum))
      .f32(static_cast<float>(a.eps));
  d.use_row_workgroup(s[0] * s[2]);
  d.groups_x = static_cast<uint32_t>(std::min<int64_t>(s[1], device_limits(d.device).max_groups_x));
  return d;
}

void batch_norm_kernel(OpCall& call) {
  const BatchNormAttrs& a = call.attrs<BatchNormAttrs>();
  const Tensor &x = call.in(0), rm = at(call, 1, false), rv = at(call, 2, false), w = at(call, 3, false),
               b = at(call, 4, false), residual = at(call, 5, false), nbt = at(call, 6, false);
  HEARTH_CHECK(!residual.defined(), NotImplementedError, "[batch_norm] the Vulkan kernel takes no residual");
  for (const Tensor& t : {x, rm, rv, w, b}) check_float(t);
  const Tensor affine = at(call, 3, true);
  const uint32_t flags = (rm.defined() ? 4u : 0u) | (rv.defined() ? 8u : 0u) | (w.defined() ? 16u : 0u) |
                         (b.defined() ? 32u : 0u) | (affine.defined() ? 64u : 0u);
  Dispatch d = batch_norm_dispatch(x, 0, a, flags);
  d.tensors = {x, rm, rv, w, b, call.out(0), call.out(1), call.out(2), affine, Tensor()};
  d.run();
  if (a.training && nbt.defined()) {
    ElementwiseScalars one;
    one.s0 = 1;
    run_elementwise(EW_ADD, nbt, {nbt, ones({}, DType::int64, nbt.device())}, true, one);
  }
}

void batch_norm_backward_kernel(OpCall& call) {
  const BatchNormAttrs& a = call.attrs<BatchNormAttrs>();
  const Tensor &g = call.in(0), &x = call.in(1), w = at(call, 4, false), y = at(call, 5, false),
               affine = at(call, 6, false);
  // A fused ReLU's mask: from its saved output, else from the forward's affine map.
  HEARTH_CHECK(!a.relu || y.defined() || affine.defined(), ValueError,
               "[batch_norm_backward] a ReLU's backward needs its saved output or the affine map");
  const bool mask_from_affine = a.relu && !y.defined();
  check_float(affine);
  const Tensor gx = at(call, 0, true), gw = at(call, 1, true), gb = at(call, 2, true), gr = at(call, 3, true);
  const uint32_t flags = (w.defined() ? 16u : 0u) | (gx.defined() ? 128u : 0u) | (gw.defined() ? 256u : 0u) |
                         (gb.defined() ? 512u : 0u) | (mask_from_affine ? 1024u : 0u) | (gr.defined() ? 2048u : 0u);
  Dispatch d = batch_norm_dispatch(x, 1, a, flags);
  d.tensors = {g, x, call.in(2), call.in(3), w, a.relu ? (y.defined() ? y : affine) : Tensor(), gx, gw, gb, gr};
  d.run();
}

// float16 and bfloat16 through float32 copies (half_widening.h).
const DTypeSet kFloat = {DType::float32, DType::float16, DType::bfloat16};

HEARTH_REGISTER_KERNEL(batch_norm, vulkan_kind(), (widened<OpId::batch_norm, batch_norm_kernel>), kFloat);
HEARTH_REGISTER_KERNEL(batch_norm_backward, vulkan_kind(),
                       (widened<OpId::batch_norm_backward, batch_norm_backward_kernel>), kFloat);

}  // namespace
}  // namespace hearth::vulkan
