// Pooling on Vulkan, float32 (16-bit floats on widened copies: half_widening.h),
// NCHW or NHWC as the strides say: max_pool2d
// and its backward (shaders/max_pool2d.comp), avg_pool2d, adaptive_avg_pool2d
// and their backwards (shaders/avg_pool2d.comp).
#include "hearth/dispatch/schemas/pooling.h"

#include "hearth/backends/vulkan/half_widening.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

void push_strides(KernelParams& p, const Tensor& t) {
  for (int d = 0; d < 4; ++d) p.i32(t.defined() ? static_cast<int32_t>(t.stride(d)) : 0);
}

// x: the forward's input (or undefined in a backward with indices); o: out
// or grad_out; g: grad_x (backward only).
void run_max_pool(uint32_t op, const Pool2dAttrs& a, const Tensor& x, const Tensor& o, const Tensor& idx,
                  const Tensor& g, const Shape& in_shape) {
  Dispatch d("max_pool2d", o.device().index);
  d.tensors = {x, o, idx, g};
  d.spec = {op};
  const Shape& os = o.shape();
  for (int64_t v : {in_shape[0], in_shape[1], in_shape[2], in_shape[3], os[2], os[3], a.kernel[0], a.kernel[1]})
    d.params.u32(static_cast<uint32_t>(v));
  for (int64_t v : {a.stride[0], a.stride[1], a.padding[0], a.padding[1], a.dilation[0], a.dilation[1]})
    d.params.i32(static_cast<int32_t>(v));
  d.params.u32(idx.defined() ? 1 : 0);
  push_strides(d.params, x);
  push_strides(d.params, o);
  push_strides(d.params, g);
  d.groups_x = d.groups_for(op == 0 ? o.numel() : g.numel());
  d.run();
}

void max_pool2d_kernel(OpCall& call) {
  const Tensor idx = call.outputs.size() > 1 ? call.out(1) : Tensor();
  run_max_pool(0, call.attrs<Pool2dAttrs>(), call.in(0), call.out(0), idx, Tensor(), call.in(0).shape());
}

void max_pool2d_backward_kernel(OpCall& call) {
  const Tensor idx = call.inputs.size() > 1 ? call.in(1) : Tensor();
  const Tensor x = call.inputs.size() > 2 ? call.in(2) : Tensor();
  HEARTH_CHECK(idx.defined() || x.defined(), ValueError, "[max_pool2d_backward] needs the indices or the input");
  run_max_pool(1, call.attrs<Pool2dAttrs>(), idx.defined() ? Tensor() : x, call.in(0), idx, call.out(0),
               call.out(0).shape());
}

// op 0/2: a = x, b = out; op 1/3: a = grad_out, b = grad_x.
void run_avg_pool(uint32_t op, const Pool2dAttrs& a, const Tensor& src, const Tensor& dst) {
  const bool forward = op == 0 || op == 2;
  const Shape& in = forward ? src.shape() : dst.shape();
  const Shape& out = forward ? dst.shape() : src.shape();
  Dispatch d("avg_pool2d", dst.device().index);
  d.tensors = {src, dst};
  d.spec = {op};
  for (int64_t v : {in[0], in[1], in[2], in[3], out[2], out[3], a.kernel[0], a.kernel[1]})
    d.params.u32(static_cast<uint32_t>(v));
  for (int64_t v : {a.stride[0], a.stride[1], a.padding[0], a.padding[1]}) d.params.i32(static_cast<int32_t>(v));
  d.params.u32(a.count_include_pad ? 1 : 0);
  push_strides(d.params, src);
  push_strides(d.params, dst);
  d.groups_x = d.groups_for(dst.numel());
  d.run();
}

void avg_pool2d_kernel(OpCall& call) { run_avg_pool(0, call.attrs<Pool2dAttrs>(), call.in(0), call.out(0)); }
void avg_pool2d_backward_kernel(OpCall& call) { run_avg_pool(1, call.attrs<Pool2dAttrs>(), call.in(0), call.out(0)); }
void adaptive_avg_pool2d_kernel(OpCall& call) { run_avg_pool(2, Pool2dAttrs(), call.in(0), call.out(0)); }
void adaptive_avg_pool2d_backward_kernel(OpCall& call) { run_avg_pool(3, Pool2dAttrs(), call.in(0), call.out(0)); }

// float16 and bfloat16 through float32 copies (half_widening.h).
const DTypeSet kFloat = {DType::float32, DType::float16, DType::bfloat16};

HEARTH_REGISTER_KERNEL(max_pool2d, vulkan_kind(), (widened<OpId::max_pool2d, max_pool2d_kernel>), kFloat);
HEARTH_REGISTER_KERNEL(max_pool2d_backward, vulkan_kind(),
                       (widened<OpId::max_pool2d_backward, max_pool2d_backward_kernel>), kFloat);
HEARTH_REGISTER_KERNEL(avg_pool2d, vulkan_kind(), (widened<OpId::avg_pool2d, avg_pool2d_kernel>), kFloat);
HEARTH_REGISTER_KERNEL(avg_pool2d_backward, vulkan_kind(),
                       (widened<OpId::avg_pool2d_backward, avg_pool2d_backward_kernel>), kFloat);
HEARTH_REGISTER_KERNEL(adaptive_avg_pool2d, vulkan_kind(),
                       (widened<OpId::adaptive_avg_pool2d, adaptive_avg_pool2d_kernel>), kFloat);
HEARTH_REGISTER_KERNEL(adaptive_avg_pool2d_backward, vulkan_kind(),
                       (widened<OpId::adaptive_avg_pool2d_backward, adaptive_avg_pool2d_backward_kernel>), kFloat);

}  // namespace
}  // namespace hearth::vulkan
