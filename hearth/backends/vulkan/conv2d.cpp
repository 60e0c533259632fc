// conv2d and its backward passes on Vulkan, float32 (16-bit floats on widened
// copies: half_widening.h), NCHW or NHWC as the
// strides say. Each group's convolution is a batched GEMM (gemm.h) over the
// column matrix of the input (shaders/im2col.comp): forward W @ cols, the
// input's gradient col2im(W^T @ grad_out), the weight's gradient the sum over
// the batch of grad_out @ cols^T. Where a column matrix would not fit one
// binding, the direct convolution of shaders/conv2d.comp runs instead (far
// slower); the bias gradient is always its per-channel reduction. The fused
// forms (conv2d_relu, conv2d_add_relu) are composed by the layer above.
#include "hearth/dispatch/schemas/conv2d.h"

#include <algorithm>

#include "hearth/autograd/grad_mode.h"
#include "hearth/backends/vulkan/elementwise.h"
#include "hearth/backends/vulkan/gemm.h"
#include "hearth/backends/vulkan/half_widening.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/reduction.h"

namespace hearth::vulkan {
namespace {

enum ConvPass : uint32_t { kForward = 0, kBackwardInput = 1, kBackwardWeight = 2, kBackwardBias = 3 };

void push_strides(KernelParams& p, const Tensor& t) {
  for (int d = 0; d < 4; ++d) {
    const int64_t s = t.defined() ? t.stride(d) : 0;
    HEARTH_CHECK(s <= INT32_MAX, NotImplementedError, "[conv2d] Vulkan strides must fit 32 bits");
    p.i32(static_cast<int32_t>(s));
  }
}

// img: x or grad_x [N, C, H, W]; w: weight or grad_weight; out: out or grad_out.
void run_conv(ConvPass pass, const Conv2dAttrs& a, const Tensor& img, const Tensor& w, const Tensor& out,
              const Tensor& bias, const Tensor& partial, const Shape& img_shape, const Shape& w_shape,
              const Shape& out_shape) {
  Dispatch d("conv2d", out.device().index);
  d.tensors = {img, w, out, bias, partial};
  d.spec = {pass};
  const int64_t N = img_shape[0], C = img_shape[1], H = img_shape[2], W = img_shape[3];
  const int64_t O = w_shape[0], KH = w_shape[2], KW = w_shape[3], OH = out_shape[2], OW = out_shape[3];
  for (int64_t v : {N, C, H, W, O, OH, OW, KH, KW}) d.params.u32(static_cast<uint32_t>(v));
  for (int64_t v : {a.stride[0], a.stride[1], a.padding[0], a.padding[1], a.dilation[0], a.dilation[1]})
    d.params.i32(static_cast<int32_t>(v));
  d.params.u32(static_cast<uint32_t>(a.groups)).u32(bias.defined() ? 1 : 0).u32(partial.defined() ? 1 : 0);
  push_strides(d.params, img);
  push_strides(d.params, w);
  push_strides(d.params, out);
  const int64_t max_groups = device_limits(d.device).max_groups_x;
  if (pass == kForward) {
    d.groups_x = d.groups_for(N * O * OH * OW);
  } else if (pass == kBackwardInput) {
    d.groups_x = d.groups_for(N * C * H * W);
  } else {
    d.use_row_workgroup(N * OH * OW);
    const int64_t items = pass == kBackwardWeight ? O * (C / a.groups) * KH * KW : O;
    d.groups_x = static_cast<uint32_t>(std::min(items, max_groups));
  }
  d.run();
}

// Geometry of one call, from the logical shapes.
struct Geometry {
  int64_t N, C, H, W, O, KH, KW, OH, OW, groups;
  int64_t Cg() const { return C / groups; }
  int64_t Og() const { return O / groups; }
  int64_t K() const { return Cg() * KH * KW; }
  int64_t S() const { return OH * OW; }
};

Geometry geometry(const Shape& x, const Shape& w, const Shape& out, int64_t groups) {
  return {x[0], x[1], x[2], x[3], w[0], w[2], w[3], out[2], out[3], groups};
}

// Whether one group's column matrix fits a binding.
bool columns_fit(const Geometry& g, int device) {
  return static_cast<uint64_t>(g.N * g.K() * g.S()) * 4 <= device_limits(device).max_binding_bytes;
}

// im2col (op 0) of channels [c0, c0 + Cg) of x into cols, or col2im (op 1) of
// cols into those channels of x (+ partial).
void run_im2col(uint32_t op, const Geometry& g, const Conv2dAttrs& a, const Tensor& x, const Tensor& cols, int64_t c0,
                const Tensor& partial) {
  Dispatch d("im2col", x.device().index);
  d.tensors = {x, cols, partial};
  d.spec = {op};
  for (int64_t v : {g.N, g.Cg(), c0, g.H, g.W, g.OH, g.OW, g.KH, g.KW}) d.params.u32(static_cast<uint32_t>(v));
  for (int64_t v : {a.stride[0], a.stride[1], a.padding[0], a.padding[1], a.dilation[0], a.dilation[1]})
    d.params.i32(static_cast<int32_t>(v));
  d.params.u32(partial.defined() ? 1 : 0);
  push_strides(d.params, x);
  d.groups_x = d.groups_for(op == 0 ? g.N * g.K() * g.S() : g.N * g.Cg() * g.H * g.W);
  d.run();
}

// An image tensor's channels [o0, o0 + count) as [N, count, OH * OW] through its strides.
Tensor as_channel_matrix(const Tensor& t, int64_t o0, int64_t count) {
  HEARTH_CHECK(t.stride(2) == t.size(3) * t.stride(3) || t.size(2) == 1, NotImplementedError,
               "[conv2d] the Vulkan kernel needs each image's rows laid out one after another");
  return t.as_strided_view({t.size(0), count, t.size(2) * t.size(3)}, {t.stride(0), t.stride(1), t.stride(3)},
                           t.offset() + o0 * t.stride(1));
}

// The weight of group g as a dense [Og, Cg * KH * KW] matrix.
Tensor weight_matrix(const Tensor& w, const Geometry& g, int64_t group) {
  return w.narrow(0, group * g.Og(), g.Og()).contiguous().view({g.Og(), g.K()});
}

void forward_by_gemm(const Geometry& g, const Conv2dAttrs& a, const Tensor& x, const Tensor& w, const Tensor& bias,
                     const Tensor& out) {
  const Device dev = out.device();
  const bool direct = out.is_contiguous() && g.groups == 1;
  for (int64_t group = 0; group < g.groups; ++group) {
    const Tensor cols = empty({g.N, g.K(), g.S()}, DType::float32, dev);
    run_im2col(0, g, a, x, cols, group * g.Cg(), Tensor());
    const Tensor wm = weight_matrix(w, g, group).unsqueeze(0).expand({g.N, g.Og(), g.K()});
    const Tensor target = direct ? out.view({g.N, g.O, g.S()}) : empty({g.N, g.Og(), g.S()}, DType::float32, dev);
    run_gemm(wm, cols, target, Tensor(), Tensor());
    if (!direct) out.narrow(1, group * g.Og(), g.Og()).copy_(target.view({g.N, g.Og(), g.OH, g.OW}));
  }
  if (bias.defined()) {
    ElementwiseScalars one;
    one.s0 = 1.0;
    run_elementwise(EW_ADD, out, {out, bias.view({g.O, 1, 1})}, false, one);
  }
}

void backward_input_by_gemm(const Geometry& g, const Conv2dAttrs& a, const Tensor& go, const Tensor& w,
                            const Tensor& partial, const Tensor& gx) {
  for (int64_t group = 0; group < g.groups; ++group) {
    const Tensor cols = empty({g.N, g.K(), g.S()}, DType::float32, gx.device());
    const Tensor wt = weight_matrix(w, g, group).t().unsqueeze(0).expand({g.N, g.K(), g.Og()});
    run_gemm(wt, as_channel_matrix(go, group * g.Og(), g.Og()), cols, Tensor(), Tensor());
    run_im2col(1, g, a, gx, cols, group * g.Cg(), partial);
  }
}

void backward_weight_by_gemm(const Geometry& g, const Conv2dAttrs& a, const Tensor& go, const Tensor& x,
                             const Tensor& gw) {
  const Device dev = gw.device();
  for (int64_t group = 0; group < g.groups; ++group) {
    const Tensor cols = empty({g.N, g.K(), g.S()}, DType::float32, dev);
    run_im2col(0, g, a, x, cols, group * g.Cg(), Tensor());
    const Tensor per_image = empty({g.N, g.Og(), g.K()}, DType::float32, dev);
    run_gemm(as_channel_matrix(go, group * g.Og(), g.Og()), cols.transpose(1, 2), per_image, Tensor(), Tensor());
    const Tensor total = g.N == 1 ? per_image.select(0, 0) : sum(per_image, {0});
    gw.narrow(0, group * g.Og(), g.Og()).copy_(total.view({g.Og(), g.Cg(), g.KH, g.KW}));
  }
}

void check_float(const Tensor& t, const char* op) {
  HEARTH_CHECK(t.dtype() == DType::float32, NotImplementedError, "[", op, "] the Vulkan kernel takes float32");
}

void conv2d_kernel(OpCall& call) {
  const Conv2dAttrs& a = call.attrs<Conv2dAttrs>();
  HEARTH_CHECK(!a.relu, NotImplementedError, "[conv2d] the Vulkan kernel has no fused ReLU");
  const Tensor &x = call.in(0), &w = call.in(1), &out = call.out(0);
  check_float(x, "conv2d");
  const Tensor bias = call.inputs.size() > 2 ? call.in(2) : Tensor();
  const Geometry g = geometry(x.shape(), w.shape(), out.shape(), a.groups);
  if (columns_fit(g, out.device().index)) {
    NoGradGuard no_grad;
    forward_by_gemm(g, a, x.detach(), w.detach(), bias.defined() ? bias.detach() : bias, out);
    return;
  }
  run_conv(kForward, a, x, w, out, bias, Tensor(), x.shape(), w.shape(), out.shape());
}

void conv2d_backward_input_kernel(OpCall& call) {
  const Conv2dAttrs& a = call.attrs<Conv2dAttrs>();
  const Tensor &go = call.in(0), &w = call.in(1), &gx = call.out(0);
  const Tensor partial = call.inputs.size() > 2 ? call.in(2) : Tensor();
  const Geometry g = geometry(gx.shape(), w.shape(), go.shape(), a.groups);
  if (columns_fit(g, gx.device().index)) {
    NoGradGuard no_grad;
    backward_input_by_gemm(g, a, go.detach(), w.detach(), partial, gx);
    return;
  }
  run_conv(kBackwardInput, a, gx, w, go, Tensor(), partial, gx.shape(), w.shape(), go.shape());
}

void conv2d_backward_weight_kernel(OpCall& call) {
  const Conv2dAttrs& a = call.attrs<Conv2dAttrs>();
  const Tensor &go = call.in(0), &x = call.in(1), &gw = call.out(0);
  const Geometry g = geometry(x.shape(), gw.shape(), go.shape(), a.groups);
  if (columns_fit(g, gw.device().index)) {
    NoGradGuard no_grad;
    backward_weight_by_gemm(g, a, go.detach(), x.detach(), gw);
    return;
  }
  run_conv(kBackwardWeight, a, x, gw, go, Tensor(), Tensor(), x.shape(), gw.shape(), go.shape());
}

// With y (a fused ReLU's saved output), grad_out is masked first and the
// masked gradient written to output 1 when wanted.
void conv2d_backward_bias_kernel(OpCall& call) {
  Tensor go = call.in(0);
  const Tensor y = call.inputs.size() > 1 ? call.in(1) : Tensor();
  const Tensor& gb = call.out(0);
  if (y.defined()) {
    const Tensor masked = call.outputs.size() > 1 && call.out(1).defined() ? call.out(1) : empty_like(go);
    run_elementwise(EW_RELU_BACKWARD, masked, {go, y}, false);
    go = masked;
  }
  Conv2dAttrs a;
  const Shape s = go.shape();
  run_conv(kBackwardBias, a, Tensor(), Tensor(), go, gb, Tensor(), {s[0], 1, 1, 1}, {s[1], 1, 1, 1}, s);
}

// float16 and bfloat16 through float32 copies (half_widening.h).
const DTypeSet kFloat = {DType::float32, DType::float16, DType::bfloat16};

HEARTH_REGISTER_KERNEL(conv2d, vulkan_kind(), (widened<OpId::conv2d, conv2d_kernel>), kFloat);
HEARTH_REGISTER_KERNEL(conv2d_backward_input, vulkan_kind(),
                       (widened<OpId::conv2d_backward_input, conv2d_backward_input_kernel>), kFloat);
HEARTH_REGISTER_KERNEL(conv2d_backward_weight, vulkan_kind(),
                       (widened<OpId::conv2d_backward_weight, conv2d_backward_weight_kernel>), kFloat);
HEARTH_REGISTER_KERNEL(conv2d_backward_bias, vulkan_kind(),
                       (widened<OpId::conv2d_backward_bias, conv2d_backward_bias_kernel>), kFloat);

}  // namespace
}  // namespace hearth::vulkan
