// max_pool2d, avg_pool2d, adaptive_avg_pool2d: PyTorch's window and output-size
// rules (ceil_mode, padding, dilation), autograd through dedicated backward ops.
#include "hearth/dispatch/schemas/pooling.h"

#include "hearth/autograd/function.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

// A [N, C, H, W] view of a 3-D or 4-D input, whether it was unbatched, and the
// memory format (NCHW or NHWC) the whole call keeps.
struct PoolInput {
  Tensor x;  // differentiable, batched
  bool unbatched;
  MemoryFormat fmt;
};

PoolInput batched_input(const char* op, const Tensor& x) {
  detail::check_floating(op, x, "input");
  HEARTH_CHECK(x.dim() == 3 || x.dim() == 4, ShapeError, "[", op,
               "] expected a 3-D (unbatched) or 4-D (batched) input [N, C, H, W], got shape ", x.shape_string());
  for (int64_t d = x.dim() - 2; d < x.dim(); ++d)
    HEARTH_CHECK(x.size(d) > 0, ShapeError, "[", op, "] expected non-empty spatial dims, got shape ", x.shape_string());
  Tensor batched = x.dim() == 3 ? unsqueeze(x, 0) : x;
  return {batched, x.dim() == 3, batched.suggest_memory_format()};
}

// PyTorch's pooling_output_shape: a window may start in the left padding but,
// with ceil_mode, the last one must start inside the input or left padding.
int64_t pooled_extent(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const int64_t span = in + 2 * p - d * (k - 1) - 1;
  int64_t out = (span + (ceil_mode ? s - 1 : 0));
  out = (out >= 0 ? out / s : -((-out + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

Pool2dAttrs pool_attrs(const char* op, Pair kernel, Pair stride, Pair padding, Pair dilation) {
  if (stride[0] == 0 && stride[1] == 0) stride = kernel;
  HEARTH_CHECK(kernel[0] >= 1 && kernel[1] >= 1, ValueError, "[", op, "] kernel size must be >= 1, got (", kernel[0],
               ", ", kernel[1], ")");
  HEARTH_CHECK(stride[0] >= 1 && stride[1] >= 1, ValueError, "[", op, "] stride must be >= 1, got (", stride[0], ", ",
               stride[1], ")");
  HEARTH_CHECK(dilation[0] >= 1 && dilation[1] >= 1, ValueError, "[", op, "] dilation must be >= 1, got (", dilation[0],
               ", ", dilation[1], ")");
  HEARTH_CHECK(padding[0] >= 0 && padding[1] >= 0 && padding[0] <= kernel[0] / 2 && padding[1] <= kernel[1] / 2,
               ValueError, "[", op, "] padding must be between 0 and half the kernel size, got padding (", padding[0],
               ", ", padding[1], ") for kernel (", kernel[0], ", ", kernel[1], ")");
  return Pool2dAttrs{kernel, stride, padding, dilation, true};
}

Shape pooled_shape(const char* op, const Tensor& x, const Pool2dAttrs& a, bool ceil_mode) {
  const int64_t h = x.size(2), w = x.size(3);
  const int64_t oh = pooled_extent(h, a.kernel[0], a.stride[0], a.padding[0], a.dilation[0], ceil_mode);
  const int64_t ow = pooled_extent(w, a.kernel[1], a.stride[1], a.padding[1], a.dilation[1], ceil_mode);
  HEARTH_CHECK(oh >= 1 && ow >= 1, ShapeError, "[", op, "] kernel (", a.kernel[0], ", ", a.kernel[1],
               ") with dilation (", a.dilation[0], ", ", a.dilation[1], ") is larger than the padded input ",
               h + 2 * a.padding[0], "x", w + 2 * a.padding[1], " (input ", x.shape_string(), "): the output would be ",
               oh, "x", ow);
  return {x.size(0), x.size(1), oh, ow};
}

Tensor finish(const Tensor& out, bool unbatched) { return unbatched ? squeeze(out, 0) : out; }

}  // namespace

Tensor max_pool2d(const Tensor& input, Pair kernel, Pair stride, Pair padding, Pair dilation, bool ceil_mode) {
  static OpHandle op = detail::op_handle(OpId::max_pool2d);
  PoolInput in = batched_input("max_pool2d", input);
  const Pool2dAttrs attrs = pool_attrs("max_pool2d", kernel, stride, padding, dilation);
  const Shape shape = pooled_shape("max_pool2d", in.x, attrs, ceil_mode);
  Tensor out = Tensor::empty(shape, in.x.dtype(), in.x.device(), in.fmt);
  const Tensor xd = contiguous(in.x.detach(), in.fmt);
  // Where windows do not overlap (VGG's 2x2 stride 2), backward finds each
  // window's argmax again in the input rather than keeping indices per
  // output: the input is usually kept anyway (the output of the convolution,
  // batch norm or ReLU before, saved by them), so the pooling keeps no memory
  // of its own. Overlapping windows (ResNet's 3x3 stride 2) would make every
  // input cell scan up to four windows again: they keep the argmax's place in
  // its window, one byte per output (windows of more than 255 cells find it
  // again too). Nothing is kept when no gradient is wanted (evaluation).
  bool overlapping = false;
  for (int d = 0; d < 2; ++d) overlapping |= (attrs.kernel[d] - 1) * attrs.dilation[d] + 1 > attrs.stride[d];
  const bool keep_indices = overlapping && attrs.kernel[0] * attrs.kernel[1] <= 255 &&
                            autograd::any_requires_grad({in.x});
  Tensor indices = keep_indices ? Tensor::empty(shape, DType::uint8, in.x.device(), in.fmt) : Tensor();
  if (out.numel() > 0) detail::run(op, {xd}, {out, indices}, attrs);
  autograd::record("MaxPool2dBackward", {in.x}, {out},
                   [sx = SavedTensor(keep_indices ? Tensor() : xd), si = SavedTensor(indices), attrs,
                    x_shape = xd.shape(), fmt = in.fmt](const BackwardContext& c) {
                     static OpHandle bop = detail::op_handle(OpId::max_pool2d_backward);
                     Tensor gx = Tensor::empty(x_shape, c.grad(0).dtype(), c.grad(0).device(), fmt);
                     if (c.grad(0).numel() == 0)
                       fill_(gx, 0);
                     else
                       detail::run(bop, {contiguous(c.grad(0), fmt), si.unpack(c.name()), sx.unpack(c.name())}, {gx},
                                   attrs);
                     return std::vector<Tensor>{gx};
                   });
  return finish(out, in.unbatched);
}

Tensor avg_pool2d(const Tensor& input, Pair kernel, Pair stride, Pair padding, bool ceil_mode, bool count_include_pad) {
  static OpHandle op = detail::op_handle(OpId::avg_pool2d);
  PoolInput in = batched_input("avg_pool2d", input);
  Pool2dAttrs attrs = pool_attrs("avg_pool2d", kernel, stride, padding, {1, 1});
  attrs.count_include_pad = count_include_pad;
  const Shape shape = pooled_shape("avg_pool2d", in.x, attrs, ceil_mode);
  Tensor out = Tensor::empty(shape, in.x.dtype(), in.x.device(), in.fmt);
  if (out.numel() > 0) detail::run(op, {contiguous(in.x.detach(), in.fmt)}, {out}, attrs);
  autograd::record("AvgPool2dBackward", {in.x}, {out},
                   [attrs, x_shape = in.x.shape(), fmt = in.fmt](const BackwardContext& c) {
                     static OpHandle bop = detail::op_handle(OpId::avg_pool2d_backward);
                     Tensor gx = Tensor::empty(x_shape, c.grad(0).dtype(), c.grad(0).device(), fmt);
                     if (c.grad(0).numel() == 0)
                       fill_(gx, 0);
                     else
                       detail::run(bop, {contiguous(c.grad(0), fmt)}, {gx}, attrs);
                     return std::vector<Tensor>{gx};
                   });
  return finish(out, in.unbatched);
}

Tensor adaptive_avg_pool2d(const Tensor& input, Pair output_size) {
  static OpHandle op = detail::op_handle(OpId::adaptive_avg_pool2d);
  PoolInput in = batched_input("adaptive_avg_pool2d", input);
  HEARTH_CHECK(output_size[0] >= 1 && output_size[1] >= 1, ValueError,
               "[adaptive_avg_pool2d] output size must be >= 1 in both dims, got (", output_size[0], ", ",
               output_size[1], ")");
  Tensor out =
      Tensor::empty({in.x.size(0), in.x.size(1), output_size[0], output_size[1]}, in.x.dtype(), in.x.device(), in.fmt);
  if (out.numel() > 0) detail::run(op, {contiguous(in.x.detach(), in.fmt)}, {out});
  autograd::record("AdaptiveAvgPool2dBackward", {in.x}, {out},
                   [x_shape = in.x.shape(), fmt = in.fmt](const BackwardContext& c) {
                     static OpHandle bop = detail::op_handle(OpId::adaptive_avg_pool2d_backward);
                     Tensor gx = Tensor::empty(x_shape, c.grad(0).dtype(), c.grad(0).device(), fmt);
                     if (c.grad(0).numel() == 0)
                       fill_(gx, 0);
                     else
                       detail::run(bop, {contiguous(c.grad(0), fmt)}, {gx});
                     return std::vector<Tensor>{gx};
                   });
  return finish(out, in.unbatched);
}

}  // namespace hearth
