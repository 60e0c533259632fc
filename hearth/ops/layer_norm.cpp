// layer_norm: normalisation over the trailing dims given by normalized_shape.
#include "hearth/dispatch/schemas/layer_norm.h"

#include "hearth/autograd/function.h"
#include "hearth/ops/autocast_policy.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/nn_util.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

void check_affine(const Tensor& p, const char* arg, const Shape& normalized_shape, const Tensor& x) {
  if (!p.defined()) return;
  HEARTH_CHECK(p.shape() == normalized_shape, ShapeError, "[layer_norm] expected '", arg, "' of shape ",
               shape_str(normalized_shape), " (normalized_shape), got ", p.shape_string());
  detail::check_param_dtype_device("layer_norm", p, arg, x);
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  if (auto ac = detail::autocast("layer_norm", x, weight, bias))
    return layer_norm(ac[0], normalized_shape, ac[1], ac[2], eps);
  static OpHandle op = detail::op_handle(OpId::layer_norm);
  static OpHandle bw_op = detail::op_handle(OpId::layer_norm_backward);
  detail::check_floating("layer_norm", x, "input");
  const int64_t nd = static_cast<int64_t>(normalized_shape.size());
  HEARTH_CHECK(nd >= 1, ValueError, "[layer_norm] normalized_shape must have at least one dimension, got []");
  bool trailing_match = x.dim() >= nd;
  for (int64_t i = 0; i < nd && trailing_match; ++i) trailing_match = x.size(x.dim() - nd + i) == normalized_shape[i];
  HEARTH_CHECK(trailing_match, ShapeError, "[layer_norm] expected an input whose trailing dims are ",
               shape_str(normalized_shape), " (normalized_shape), got shape ", x.shape_string());
  check_affine(weight, "weight", normalized_shape, x);
  check_affine(bias, "bias", normalized_shape, x);
  HEARTH_CHECK(eps > 0, ValueError, "[layer_norm] eps must be positive, got ", eps);

  const int64_t K = numel_of(normalized_shape);
  const int64_t M = K == 0 ? 0 : x.numel() / K;
  const DType acc = detail::acc_dtype(x.dtype());
  const Device dev = x.device();
  Tensor x2 = detail::dense_detached(x).reshape({M, K});
  Tensor w1 = weight.defined() ? detail::dense_detached(weight).reshape({K}) : Tensor();
  Tensor b1 = bias.defined() ? detail::dense_detached(bias).reshape({K}) : Tensor();
  Tensor y = Tensor::empty({M, K}, x.dtype(), dev);
  Tensor mean = Tensor::empty({M}, acc, dev), rstd = Tensor::empty({M}, acc, dev);
  if (x.numel() > 0) detail::run(op, {x2, w1, b1}, {y, mean, rstd}, LayerNormAttrs{eps});
  y = y.view(x.shape());

  if (autograd::any_requires_grad({x, weight, bias})) {
    autograd::record("LayerNormBackward", {x, weight, bias}, {y},
                     [sx = SavedTensor(x2), sw = SavedTensor(w1), mean, rstd, shape = x.shape(), normalized_shape,
                      wdt = weight.defined() ? weight.dtype() : acc,
                      bdt = bias.defined() ? bias.dtype() : acc](const BackwardContext& c) {
                       Tensor xs = sx.unpack(c.name());
                       const Shape& s2 = xs.shape();
                       Tensor gx = c.needs(0) ? Tensor::empty(s2, xs.dtype(), xs.device()) : Tensor();
                       Tensor gw = c.needs(1) ? Tensor::empty({s2[1]}, wdt, xs.device()) : Tensor();
                       Tensor gb = c.needs(2) ? Tensor::empty({s2[1]}, bdt, xs.device()) : Tensor();
                       if (xs.numel() > 0) {
                         Tensor g = c.grad(0).dtype() == xs.dtype() ? c.grad(0) : cast(c.grad(0), xs.dtype());
                         g = detail::dense_detached(g).reshape(s2);
                         detail::run(bw_op, {g, xs, mean, rstd, sw.unpack(c.name())}, {gx, gw, gb});
                       } else {  // nothing to normalise: parameter gradients are empty sums
                         if (gw.defined()) zero_(gw);
                         if (gb.defined()) zero_(gb);
                       }
                       return std::vector<Tensor>{gx.defined() ? gx.view(shape) : gx,
                                                  gw.defined() ? gw.view(normalized_shape) : gw,
                                                  gb.defined() ? gb.view(normalized_shape) : gb};
                     });
  }
  return y;
}

}  // namespace hearth
