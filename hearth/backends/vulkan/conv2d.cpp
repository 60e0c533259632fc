// conv2d and its backward passes on Vulkan (shaders/conv2d.comp): direct
// convolution, float32, NCHW or NHWC as the strides say. The fused forms
// (conv2d_relu, conv2d_add_relu) are composed by the layer above.
#include "hearth/dispatch/schemas/conv2d.h"

#include <algorithm>

#include "hearth/backends/vulkan/elementwise.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"
#include "hearth/ops/factory.h"

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

void check_float(const Tensor& t, const char* op) {
  HEARTH_CHECK(t.dtype() == DType::float32, NotImplementedError, "[", op, "] the Vulkan kernel takes float32");
}

void conv2d_kernel(OpCall& call) {
  const Conv2dAttrs& a = call.attrs<Conv2dAttrs>();
  HEARTH_CHECK(!a.relu, NotImplementedError, "[conv2d] the Vulkan kernel has no fused ReLU");
  const Tensor &x = call.in(0), &w = call.in(1), &out = call.out(0);
  check_float(x, "conv2d");
  const Tensor bias = call.inputs.size() > 2 ? call.in(2) : Tensor();
  run_conv(kForward, a, x, w, out, bias, Tensor(), x.shape(), w.shape(), out.shape());
}

void conv2d_backward_input_kernel(OpCall& call) {
  const Conv2dAttrs& a = call.attrs<Conv2dAttrs>();
  const Tensor &go = call.in(0), &w = call.in(1), &gx = call.out(0);
  const Tensor partial = call.inputs.size() > 2 ? call.in(2) : Tensor();
  run_conv(kBackwardInput, a, gx, w, go, Tensor(), partial, gx.shape(), w.shape(), go.shape());
}

void conv2d_backward_weight_kernel(OpCall& call) {
  const Conv2dAttrs& a = call.attrs<Conv2dAttrs>();
  const Tensor &go = call.in(0), &x = call.in(1), &gw = call.out(0);
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

const DTypeSet kFloat = {DType::float32};

HEARTH_REGISTER_KERNEL(conv2d, vulkan_kind(), conv2d_kernel, kFloat);
HEARTH_REGISTER_KERNEL(conv2d_backward_input, vulkan_kind(), conv2d_backward_input_kernel, kFloat);
HEARTH_REGISTER_KERNEL(conv2d_backward_weight, vulkan_kind(), conv2d_backward_weight_kernel, kFloat);
HEARTH_REGISTER_KERNEL(conv2d_backward_bias, vulkan_kind(), conv2d_backward_bias_kernel, kFloat);

}  // namespace
}  // namespace hearth::vulkan
