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

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  static OpHandle op = detail::op_handle("batch_norm", {1, 2});
  static OpHandle bw_op = detail::op_handle("batch_norm_backward");
  detail::check_floating("batch_norm", x, "input");
  HEARTH_CHECK(x.dim() >= 2, ShapeError, "[batch_norm] expected an input of shape [N, C, *] with at least 2 dims, got ",
               x.shape_string());
  const int64_t N = x.size(0), C = x.size(1);
  int64_t S = 1;
  for (int64_t d = 2; d < x.dim(); ++d) S *= x.size(d);
  detail::check_channel_param("batch_norm", running_mean, "running_mean", C, x);
  detail::check_channel_param("batch_norm", running_var, "running_var", C, x);
  detail::check_channel_param("batch_norm", weight, "weight", C, x);
  detail::check_channel_param("batch_norm", bias, "bias", C, x);
  HEARTH_CHECK(training || (running_mean.defined() && running_var.defined()), ValueError,
               "[batch_norm] evaluation (training=false) needs running_mean and running_var");
  HEARTH_CHECK(!training || N * S > 1, ValueError,
               "[batch_norm] expected more than 1 value per channel when training, got input of shape ",
               x.shape_string());
  HEARTH_CHECK(eps > 0, ValueError, "[batch_norm] eps must be positive, got ", eps);
  if (training) {
    if (running_mean.defined()) detail::check_inplace_allowed("batch_norm", running_mean);
    if (running_var.defined()) detail::check_inplace_allowed("batch_norm", running_var);
  }

  const DType acc = detail::acc_dtype(x.dtype());
  const Device dev = x.device();
  Tensor x3 = detail::dense_detached(x).view({N, C, S});
  Tensor y = Tensor::empty({N, C, S}, x.dtype(), dev);
  Tensor mean = Tensor::empty({C}, acc, dev), invstd = Tensor::empty({C}, acc, dev);
  RunningStat rm(running_mean), rv(running_var);
  const BatchNormAttrs attrs{training, momentum, eps};
  if (C > 0) {
    detail::run(op, {x3, rm.arg, rv.arg, detail::dense_detached(weight), detail::dense_detached(bias)},
                {y, mean, invstd}, attrs);
  }
  rm.finish(training && C > 0);
  rv.finish(training && C > 0);
  y = y.view(x.shape());

  if (autograd::any_requires_grad({x, weight, bias})) {
    autograd::record(
        "BatchNormBackward", {x, weight, bias}, {y},
        [sx = SavedTensor(x3), sw = SavedTensor(weight), mean, invstd, attrs, shape = x.shape(),
         wdt = weight.defined() ? weight.dtype() : acc,
         bdt = bias.defined() ? bias.dtype() : acc](const BackwardContext& c) {
          Tensor xs = sx.unpack(c.name());
          Tensor w = detail::dense_detached(sw.unpack(c.name()));
          const Shape& s3 = xs.shape();
          Tensor g = detail::dense_detached(c.grad(0).dtype() == xs.dtype() ? c.grad(0) : cast(c.grad(0), xs.dtype()));
          g = g.view(s3);
          Tensor gx = c.needs(0) ? Tensor::empty(s3, xs.dtype(), xs.device()) : Tensor();
          Tensor gw = c.needs(1) ? Tensor::empty({s3[1]}, wdt, xs.device()) : Tensor();
          Tensor gb = c.needs(2) ? Tensor::empty({s3[1]}, bdt, xs.device()) : Tensor();
          if (s3[1] > 0) detail::run(bw_op, {g, xs, mean, invstd, w}, {gx, gw, gb}, attrs);
          return std::vector<Tensor>{gx.defined() ? gx.view(shape) : gx, gw, gb};
        });
  }
  return y;
}

}  // namespace hearth
