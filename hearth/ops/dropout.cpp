// dropout: zeroes elements with probability p using the global Philox
// generator, scaling survivors by 1/(1-p); backward reuses the same mask.
#include "hearth/dispatch/schemas/dropout.h"

#include "hearth/autograd/function.h"
#include "hearth/core/generator.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/nn_functional.h"
#include "hearth/ops/nn_util.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/view.h"

namespace hearth {

Tensor dropout(const Tensor& x, double p, bool training) {
  static OpHandle op = detail::op_handle(OpId::dropout);
  static OpHandle bw_op = detail::op_handle(OpId::dropout_backward);
  detail::check_floating("dropout", x, "input");
  HEARTH_CHECK(p >= 0.0 && p <= 1.0, ValueError, "[dropout] probability p must be in [0, 1], got ", p);
  if (!training || p == 0.0) return x;
  // Everything dropped: multiplying (not filling) keeps NaN/inf propagation and
  // the graph, as PyTorch does; no random numbers are drawn.
  if (p == 1.0) return mul(x, 0.0);

  const int64_t n = x.numel();
  Tensor y = Tensor::empty({n}, x.dtype(), x.device());
  Tensor mask = Tensor::empty({n}, DType::bool_, x.device());
  DropoutAttrs attrs{0, 0, p};
  if (n > 0) {
    Generator& g = default_generator();
    attrs.seed = g.seed();
    attrs.offset = g.reserve(dropout_counters(n));
    detail::run(op, {detail::dense_detached(x).reshape({n})}, {y, mask}, attrs);
  }
  y = y.view(x.shape());
  if (autograd::any_requires_grad({x})) {
    autograd::record("DropoutBackward", {x}, {y}, [mask, attrs, shape = x.shape()](const autograd::BackwardContext& c) {
      Tensor gx = Tensor::empty({mask.numel()}, c.grad(0).dtype(), mask.device());
      if (mask.numel() > 0)
        detail::run(bw_op, {detail::dense_detached(c.grad(0)).reshape({mask.numel()}), mask}, {gx}, attrs);
      return std::vector<Tensor>{gx.view(shape)};
    });
  }
  return y;
}

}  // namespace hearth
