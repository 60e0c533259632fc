// softmax and log_softmax along any dim. Kernels see [outer, D, inner].
#include "hearth/autograd/function.h"
#include "hearth/ops/autocast_policy.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/nn_util.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

Shape lines_shape(const Tensor& x, int64_t dim) {
  if (x.dim() == 0) return {1, 1, 1};
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  return {outer, x.size(dim), inner};
}

Tensor softmax_impl(const char* name, const char* backward_name, bool log, const Tensor& x, int64_t dim) {
  static OpHandle fwd[2] = {detail::op_handle(OpId::softmax), detail::op_handle(OpId::log_softmax)};
  static OpHandle bwd[2] = {detail::op_handle(OpId::softmax_backward), detail::op_handle(OpId::log_softmax_backward)};
  detail::check_floating(name, x, "input");
  const int64_t d = wrap_dim(dim, x.dim(), name);
  const Shape s3 = lines_shape(x, d);
  Tensor y = Tensor::empty(s3, x.dtype(), x.device());
  if (x.numel() > 0) detail::run(fwd[log], {detail::dense_detached(x).reshape(s3)}, {y});
  y = y.view(x.shape());
  if (autograd::any_requires_grad({x})) {
    autograd::record(backward_name, {x}, {y}, [sy = SavedTensor(y), s3, log](const BackwardContext& c) {
      Tensor yv = sy.unpack(c.name());
      Tensor gx = Tensor::empty(s3, yv.dtype(), yv.device());
      if (yv.numel() > 0) {
        Tensor g = c.grad(0).dtype() == yv.dtype() ? c.grad(0) : cast(c.grad(0), yv.dtype());
        detail::run(bwd[log], {detail::dense_detached(g).reshape(s3), yv.reshape(s3)}, {gx});
      }
      return std::vector<Tensor>{gx.view(yv.shape())};
    });
  }
  return y;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  if (auto ac = detail::autocast("softmax", x)) return softmax(ac[0], dim);
  return softmax_impl("softmax", "SoftmaxBackward", false, x, dim);
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  if (auto ac = detail::autocast("log_softmax", x)) return log_softmax(ac[0], dim);
  return softmax_impl("log_softmax", "LogSoftmaxBackward", true, x, dim);
}

}  // namespace hearth
