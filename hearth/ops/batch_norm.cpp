// batch_norm: per-channel normalisation of [N, C, *] inputs, with running
// statistics updated in place while training.
#include "hearth/autograd/function.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/dispatch/schemas/nn.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/nn_util.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

// The kernel writes running statistics in place and needs them dense; a strided
// one is updated through a dense copy that is written back afterwards.
struct RunningStat {
  Tensor user;
  Tensor arg;
  explicit RunningStat(const Tensor& t) : user(t), arg(t.defined() && !t.is_contiguous() ? t.detach().clone() : t) {}
  void finish(bool written) const {
    if (!written || !user.defined()) return;
    if (arg.is_same(user)) {
      user.bump_version();
    } else {
      NoGradGuard no_grad;
      copy_(user, arg);
    }
  }
};

// The [N, C, S] matrix the kernels take, over an image's memory. An NCHW input
// is viewed as [N, C, H*W]; a channels_last one as [N*H*W, C, 1] (its memory is
// exactly those rows), so NHWC stays NHWC without a transpose.
struct KernelLayout {
  bool channels_last;
  Shape shape;  // the logical input shape
  Shape rows;   // the kernels' [N', C, S]

  explicit KernelLayout(const Tensor& x) : channels_last(x.suggest_memory_format() == MemoryFormat::channels_last) {
    shape = x.shape();
    int64_t s = 1;
    for (int64_t d = 2; d < x.dim(); ++d) s *= x.size(d);
    rows = channels_last ? Shape{x.size(0) * s, x.size(1), 1} : Shape{x.size(0), x.size(1), s};
  }
  MemoryFormat format() const { return channels_last ? MemoryFormat::channels_last : MemoryFormat::contiguous; }
  // A detached dense tensor of `shape` in this layout, as the kernels' matrix.
  Tensor matrix(const Tensor& t) const {
    Tensor dense = channels_last ? contiguous(t.detach(), MemoryFormat::channels_last) : detail::dense_detached(t);
    return dense.as_strided_view(rows, contiguous_strides(rows), dense.offset());
  }
  Tensor empty(DType dtype, Device device) const { return Tensor::empty(shape, dtype, device, format()); }
  Tensor matrix_of_empty(const Tensor& t) const {
    return t.as_strided_view(rows, contiguous_strides(rows), t.offset());
  }
};

Tensor batch_norm_impl(const char* name, const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                       const Tensor& weight, const Tensor& bias, bool training, double momentum, double eps,
                       bool relu) {
  static OpHandle op = detail::op_handle("batch_norm", {1, 2});
  static OpHandle bw_op = detail::op_handle("batch_norm_backward");
  detail::check_floating(name, x, "input");
  HEARTH_CHECK(x.dim() >= 2, ShapeError, "[", name, "] expected an input of shape [N, C, *] with at least 2 dims, got ",
               x.shape_string());
  const int64_t N = x.size(0), C = x.size(1);
  int64_t S = 1;
  for (int64_t d = 2; d < x.dim(); ++d) S *= x.size(d);
  detail::check_channel_param(name, running_mean, "running_mean", C, x);
  detail::check_channel_param(name, running_var, "running_var", C, x);
  detail::check_channel_param(name, weight, "weight", C, x);
  detail::check_channel_param(name, bias, "bias", C, x);
  HEARTH_CHECK(training || (running_mean.defined() && running_var.defined()), ValueError, "[", name,
               "] evaluation (training=false) needs running_mean and running_var");
  HEARTH_CHECK(!training || N * S > 1, ValueError, "[", name,
               "] expected more than 1 value per channel when training, got input of shape ", x.shape_string());
  HEARTH_CHECK(eps > 0, ValueError, "[", name, "] eps must be positive, got ", eps);
  if (training) {
    if (running_mean.defined()) detail::check_inplace_allowed(name, running_mean);
    if (running_var.defined()) detail::check_inplace_allowed(name, running_var);
  }

  const DType acc = detail::acc_dtype(x.dtype());
  const Device dev = x.device();
  const KernelLayout layout(x);
  Tensor x3 = layout.matrix(x);
  Tensor y = layout.empty(x.dtype(), dev);
  Tensor mean = Tensor::empty({C}, acc, dev), invstd = Tensor::empty({C}, acc, dev);
  RunningStat rm(running_mean), rv(running_var);
  const BatchNormAttrs attrs{training, momentum, eps, relu};
  if (C > 0) {
    detail::run(op, {x3, rm.arg, rv.arg, detail::dense_detached(weight), detail::dense_detached(bias)},
                {layout.matrix_of_empty(y), mean, invstd}, attrs);
  }
  rm.finish(training && C > 0);
  rv.finish(training && C > 0);

  if (autograd::any_requires_grad({x, weight, bias})) {
    // The fused ReLU's mask comes from the output, saved as the kernels' matrix.
    const SavedTensor sy = relu ? SavedTensor(layout.matrix_of_empty(y)) : SavedTensor();
    autograd::record(relu ? "BatchNormReluBackward" : "BatchNormBackward", {x, weight, bias}, {y},
                     [sx = SavedTensor(x3), sw = SavedTensor(weight), sy, mean, invstd, attrs, layout,
                      wdt = weight.defined() ? weight.dtype() : acc,
                      bdt = bias.defined() ? bias.dtype() : acc](const BackwardContext& c) {
                       Tensor xs = sx.unpack(c.name());
                       Tensor w = detail::dense_detached(sw.unpack(c.name()));
                       const Shape& s3 = xs.shape();
                       Tensor g =
                           layout.matrix(c.grad(0).dtype() == xs.dtype() ? c.grad(0) : cast(c.grad(0), xs.dtype()));
                       Tensor gx = c.needs(0) ? layout.empty(xs.dtype(), xs.device()) : Tensor();
                       Tensor gw = c.needs(1) ? Tensor::empty({s3[1]}, wdt, xs.device()) : Tensor();
                       Tensor gb = c.needs(2) ? Tensor::empty({s3[1]}, bdt, xs.device()) : Tensor();
                       std::vector<Tensor> ins{g, xs, mean, invstd, w};
                       if (attrs.relu) ins.push_back(sy.unpack(c.name()));
                       if (s3[1] > 0)
                         detail::run(bw_op, std::move(ins), {gx.defined() ? layout.matrix_of_empty(gx) : gx, gw, gb},
                                     attrs);
                       return std::vector<Tensor>{gx, gw, gb};
                     });
  }
  return y;
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  return batch_norm_impl("batch_norm", x, running_mean, running_var, weight, bias, training, momentum, eps, false);
}

Tensor batch_norm_relu(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                       const Tensor& bias, bool training, double momentum, double eps) {
  return batch_norm_impl("batch_norm_relu", x, running_mean, running_var, weight, bias, training, momentum, eps, true);
}

}  // namespace hearth
