// conv2d: validation, output geometry, and the backward as three separate ops
// (data, filter, bias) so a backend can map each onto its library's routine.
#include "hearth/dispatch/schemas/conv2d.h"

#include <tuple>
#include <utility>

#include "hearth/autograd/function.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/ops/autocast_policy.h"
#include "hearth/ops/composition.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

void check_pair(const char* what, const Pair& p, int64_t min) {
  HEARTH_CHECK(p[0] >= min && p[1] >= min, ValueError, "[conv2d] ", what, " must be >= ", min, " in both dims, got (",
               p[0], ", ", p[1], ")");
}

int64_t out_extent(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

// Backward ops; not themselves differentiable (no double backward through conv2d).
// Every tensor a kernel sees is dense in the forward's memory format `fmt`.
// accumulate_into: a partial sum of x's gradient (dense in fmt, of grad_out's
// dtype, held by nobody else) that the data gradient is added into, in its
// memory; returned.
Tensor conv_backward_input(const Tensor& grad_out, const Tensor& weight, const Shape& x_shape, const Conv2dAttrs& a,
                           MemoryFormat fmt, const Tensor& accumulate_into = Tensor()) {
  static OpHandle op = detail::op_handle(OpId::conv2d_backward_input);
  if (accumulate_into.defined()) {
    HEARTH_CHECK(accumulate_into.shape() == x_shape && accumulate_into.dtype() == grad_out.dtype() &&
                     accumulate_into.is_contiguous(fmt),
                 AutogradError, "[conv2d] a partial gradient to accumulate into must have the input's shape ",
                 shape_str(x_shape), ", the gradient's dtype and the convolution's layout; got ",
                 accumulate_into.shape_string(), " ", dtype_name(accumulate_into.dtype()));
    const Tensor& sum = accumulate_into;
    if (sum.numel() == 0 || grad_out.numel() == 0 || weight.numel() == 0) return sum;  // nothing to add
    const Tensor g = contiguous(grad_out, fmt);
    if (detail::accepts(op, {g, weight, sum}, {sum}, a)) {
      detail::run(op, {g, weight, sum}, {sum}, a);
    } else {
      // A kernel that does not add into a partial sum (its check says so):
      // the gradient on its own, then the add.
      Tensor gx = Tensor::empty(x_shape, grad_out.dtype(), grad_out.device(), fmt);
      detail::run(op, {g, weight}, {gx}, a);
      NoGradGuard no_grad;
      copy_(sum, add(sum, gx));
    }
    sum.bump_version();
    return sum;
  }
  Tensor gx = Tensor::empty(x_shape, grad_out.dtype(), grad_out.device(), fmt);
  if (gx.numel() == 0) return gx;
  if (grad_out.numel() == 0 || weight.numel() == 0) return fill_(gx, 0);
  detail::run(op, {contiguous(grad_out, fmt), weight}, {gx}, a);
  return gx;
}

// The gradient comes back in the weight's own format (a float32 model's NCHW
// weights stay NCHW under channels_last activations), as its .grad must match it.
Tensor conv_backward_weight(const Tensor& grad_out, const Tensor& x, const Shape& w_shape, const Conv2dAttrs& a,
                            MemoryFormat fmt, MemoryFormat weight_fmt) {
  static OpHandle op = detail::op_handle(OpId::conv2d_backward_weight);
  Tensor gw = Tensor::empty(w_shape, grad_out.dtype(), grad_out.device(), fmt);
  if (gw.numel() == 0) return gw;
  if (grad_out.numel() == 0) return fill_(gw, 0);
  detail::run(op, {contiguous(grad_out, fmt), x}, {gw}, a);
  return contiguous(gw, weight_fmt);
}

// The bias gradient; with conv2d_relu's saved output y, grad_out is masked by
// the ReLU in the same pass, and the masked gradient (which the other two
// backward passes take) comes back beside it: {grad_bias, masked or undefined}.
std::pair<Tensor, Tensor> conv_backward_bias(const Tensor& grad_out, MemoryFormat fmt, const Tensor& y = Tensor()) {
  static OpHandle op = detail::op_handle(OpId::conv2d_backward_bias);
  Tensor g = contiguous(grad_out, fmt);
  Tensor gb = Tensor::empty({g.size(1)}, g.dtype(), g.device());
  Tensor masked = y.defined() ? Tensor::empty(g.shape(), g.dtype(), g.device(), fmt) : Tensor();
  if (gb.numel() == 0) return {gb, masked};
  if (g.numel() == 0) return {fill_(gb, 0), masked};
  if (y.defined())
    detail::run(op, {g, contiguous(y, fmt)}, {gb, masked});
  else
    detail::run(op, {g}, {gb});
  return {gb, masked};
}

}  // namespace

namespace {

// residual (only with relu): out = max(conv + bias + residual, 0).
Tensor conv2d_impl(const Tensor& x_in, const Tensor& weight, const Tensor& bias, Pair stride, Pair padding,
                   Pair dilation, int64_t groups, bool relu, const Tensor& residual_in = Tensor()) {
  if (auto ac = detail::autocast("conv2d", x_in, weight, bias)) {
    // The residual joins the convolution's output, so it takes the dtype the
    // convolution computes in (a differentiable cast, as the add would make).
    const Tensor r =
        residual_in.defined() && residual_in.dtype() != ac[0].dtype() ? cast(residual_in, ac[0].dtype()) : residual_in;
    return conv2d_impl(ac[0], ac[1], ac[2], stride, padding, dilation, groups, relu, r);
  }
  // conv2d_relu and conv2d_add_relu: the same kernels, which read the ReLU
  // from the attributes and the residual from a fourth input.
  static OpHandle plain_op = detail::op_handle(OpId::conv2d);
  static OpHandle relu_op = detail::op_handle(OpId::conv2d_relu);
  static OpHandle add_relu_op = detail::op_handle(OpId::conv2d_add_relu);
  const char* name = residual_in.defined() ? "conv2d_add_relu" : "conv2d";
  const OpHandle op = residual_in.defined() ? add_relu_op : relu ? relu_op : plain_op;
  detail::check_floating(name, x_in, "input");
  detail::check_floating(name, weight, "weight");
  detail::check_same_dtype(name, x_in, weight);
  if (bias.defined()) detail::check_same_dtype(name, x_in, bias);
  if (residual_in.defined()) detail::check_same_dtype(name, x_in, residual_in);
  common_device(name, {x_in, weight, bias, residual_in});
  HEARTH_CHECK(x_in.dim() == 3 || x_in.dim() == 4, ShapeError,
               "[conv2d] expected a 3-D (unbatched) or 4-D (batched) input [N, C, H, W], got shape ",
               x_in.shape_string());
  detail::check_dim("conv2d", weight, 4, "weight");
  check_pair("stride", stride, 1);
  check_pair("padding", padding, 0);
  check_pair("dilation", dilation, 1);
  HEARTH_CHECK(groups >= 1, ValueError, "[conv2d] groups must be >= 1, got ", groups);
  const bool unbatched = x_in.dim() == 3;
  const Tensor x = unbatched ? unsqueeze(x_in, 0) : x_in;
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const int64_t o = weight.size(0), kh = weight.size(2), kw = weight.size(3);
  HEARTH_CHECK(o % groups == 0, ValueError, "[conv2d] weight has ", o,
               " output channels, not divisible by groups=", groups);
  HEARTH_CHECK(c == weight.size(1) * groups, ShapeError, "[conv2d] input has ", c, " channels (shape ",
               x_in.shape_string(), ") but weight ", weight.shape_string(), " with groups=", groups, " expects ",
               weight.size(1) * groups);
  if (bias.defined())
    HEARTH_CHECK(bias.dim() == 1 && bias.size(0) == o, ShapeError, "[conv2d] bias must have shape [", o,
                 "] (one per output channel), got ", bias.shape_string());
  HEARTH_CHECK(kh >= 1 && kw >= 1, ShapeError, "[conv2d] weight ", weight.shape_string(),
               " has an empty kernel (kH and kW must be >= 1)");
  const int64_t ekh = dilation[0] * (kh - 1) + 1, ekw = dilation[1] * (kw - 1) + 1;
  HEARTH_CHECK(ekh <= h + 2 * padding[0] && ekw <= w + 2 * padding[1], ShapeError, "[conv2d] kernel size ", ekh, "x",
               ekw, " (after dilation) is larger than the padded input ", h + 2 * padding[0], "x", w + 2 * padding[1]);

  const Conv2dAttrs attrs{stride, padding, dilation, groups, relu};
  const int64_t oh = out_extent(h, kh, stride[0], padding[0], dilation[0]);
  const int64_t ow = out_extent(w, kw, stride[1], padding[1], dilation[1]);
  // The input's memory format decides the computation's (PyTorch's rule): a
  // channels_last input makes the weight channels_last too (NHWC kernels
  // want both) and yields a channels_last output.
  const MemoryFormat fmt = x.suggest_memory_format();
  const MemoryFormat weight_fmt = weight.suggest_memory_format();
  const Tensor residual = residual_in.defined() && unbatched ? unsqueeze(residual_in, 0) : residual_in;
  if (residual.defined())
    HEARTH_CHECK(residual.shape() == Shape({n, o, oh, ow}), ShapeError,
                 "[conv2d_add_relu] expected a residual of the output's shape [", n, ", ", o, ", ", oh, ", ", ow,
                 "], got ", residual_in.shape_string());
  Tensor xc = contiguous(x.detach(), fmt);
  Tensor wc = contiguous(weight.detach(), fmt);
  Tensor bc = bias.defined() ? contiguous(bias.detach()) : Tensor();
  Tensor out = Tensor::empty({n, o, oh, ow}, x.dtype(), x.device(), fmt);
  if (out.numel() > 0) {
    if (wc.numel() == 0) {
      // No input channels: the output is the bias (and residual) alone.
      NoGradGuard no_grad;
      Tensor v = bc.defined() ? bc.view({1, o, 1, 1}) : Tensor();
      if (residual.defined()) v = v.defined() ? add(residual.detach(), v) : residual.detach();
      if (v.defined())
        copy_(out, relu ? hearth::relu(v) : v);
      else
        fill_(out, 0);
    } else {
      std::vector<Tensor> inputs{xc, wc, bc};
      if (residual.defined()) inputs.push_back(contiguous(residual.detach(), fmt));
      detail::run(op, std::move(inputs), {out}, attrs);
    }
  }
  if (autograd::any_requires_grad({x, weight, bias, residual})) {
    // The fused ReLU's mask comes from the output, as relu's own backward takes it.
    const SavedTensor sy = relu ? SavedTensor(out) : SavedTensor();
    // A device with the fused forward masks the gradient in its bias kernel
    // (conv2d_backward_bias's second input); one that composed the forward
    // gets relu_backward and the plain bias gradient, primitives alone.
    const bool masks_in_bias_kernel = relu && supports(op, x.device().kind, x.dtype());
    autograd::record(
        residual.defined() ? "Conv2dAddReluBackward"
        : relu             ? "Conv2dReluBackward"
                           : "Conv2dBackward",
        {x, weight, bias, residual}, {out},
        [sx = SavedTensor(xc), sw = SavedTensor(wc), sy, attrs, fmt, weight_fmt,
         masks_in_bias_kernel](const BackwardContext& ctx) {
          Tensor g, gx, gw, gb;
          if (masks_in_bias_kernel && ctx.needs(2)) {
            std::tie(gb, g) = conv_backward_bias(ctx.grad(0), fmt, sy.unpack(ctx.name()));
          } else {
            g = attrs.relu ? contiguous(relu_backward(ctx.grad(0), sy.unpack(ctx.name())), fmt) : ctx.grad(0);
            if (ctx.needs(2)) gb = conv_backward_bias(g, fmt).first;
          }
          if (ctx.needs(0)) {
            Tensor wt = sw.unpack(ctx.name());
            gx = conv_backward_input(g, wt, sx.unpack(ctx.name()).shape(), attrs, fmt, ctx.take_accumulate_into(0));
          }
          if (ctx.needs(1)) {
            gw = conv_backward_weight(g, sx.unpack(ctx.name()), sw.unpack(ctx.name()).shape(), attrs, fmt, weight_fmt);
          }
          // The residual's gradient is the masked gradient itself.
          return std::vector<Tensor>{gx, gw, gb, ctx.needs(3) ? g : Tensor()};
        },
        // x's gradient can be added into a partial sum of it (ResNet's block
        // inputs: the identity's or downsample's gradient, then conv1's).
        {autograd::AccumulatingInput{0, fmt, x.dtype()}});
  }
  return unbatched ? squeeze(out, 0) : out;
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, Pair stride, Pair padding, Pair dilation,
              int64_t groups) {
  return conv2d_impl(x, weight, bias, stride, padding, dilation, groups, false);
}

Tensor conv2d_relu(const Tensor& x, const Tensor& weight, const Tensor& bias, Pair stride, Pair padding, Pair dilation,
                   int64_t groups) {
  return conv2d_impl(x, weight, bias, stride, padding, dilation, groups, true);
}

Tensor conv2d_add_relu(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& residual, Pair stride,
                       Pair padding, Pair dilation, int64_t groups) {
  detail::check_defined("conv2d_add_relu", residual, "residual");
  return conv2d_impl(x, weight, bias, stride, padding, dilation, groups, true, residual);
}

// The compositions of conv2d_relu and conv2d_add_relu (inputs {x, weight,
// bias?, residual?}, outputs {out}, hearth/dispatch/schemas/conv2d.h): the
// plain convolution into the output, then the residual and the ReLU, rounded
// as relu(add(conv2d(x), residual)) rounds.
namespace {

void compose_conv2d_relu(OpCall& call) {
  static OpHandle plain_op = detail::op_handle(OpId::conv2d);
  detail::CompositionScope scope;
  Conv2dAttrs plain = call.attrs<Conv2dAttrs>();
  plain.relu = false;
  const Tensor& out = call.out(0);
  detail::run(plain_op, {call.in(0), call.in(1), call.in(2)}, {out}, plain);
  const bool has_residual = call.inputs.size() > 3 && call.in(3).defined();
  copy_(out, relu(has_residual ? add(out, call.in(3)) : out));
}

HEARTH_REGISTER_COMPOSITION(conv2d_relu, compose_conv2d_relu);
HEARTH_REGISTER_COMPOSITION(conv2d_add_relu, compose_conv2d_relu);

}  // namespace

}  // namespace hearth
