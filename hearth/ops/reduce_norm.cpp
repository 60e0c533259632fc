// norm: the vector p-norm over any set of dims (p = 0 counts nonzeros, p = +-inf
// is the largest/smallest magnitude). Gradients follow PyTorch, including
// zero where the norm is zero and an even split among tied extremes for inf.
#include "hearth/dispatch/schemas/reduce_norm.h"

#include <cmath>

#include "hearth/autograd/function.h"
#include "hearth/ops/autocast_policy.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/reduce_util.h"
#include "hearth/ops/reduction.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

// d norm / d x given the input x, the norm n and the incoming gradient g (both
// shaped with the reduced dims kept as 1).
Tensor norm_backward(const Tensor& x, const Tensor& n, const Tensor& g, double p, const Shape& keep) {
  if (p == 0) return zeros_like(x);
  if (p == 1) return mul(sign(x), g);
  if (p == 2) return mul(x, masked_fill(div(g, n), eq(n, 0.0), 0.0));
  if (std::isinf(p)) {
    Tensor mask = cast(eq(abs(x), n), x.dtype());
    Tensor count = autograd::sum_to_shape(mask, keep);
    return mul(mul(sign(x), mask), div(g, count));
  }
  // d/dx (sum |x|^p)^(1/p) = sign(x) |x|^(p-1) / n^(p-1)
  Tensor scaled = mul(sign(x), pow(abs(x), p - 1));
  if (p < 1) scaled = masked_fill(scaled, eq(x, 0.0), 0.0);  // |0|^(p-1) is inf, its sign 0
  Tensor scale = masked_fill(div(g, pow(n, p - 1)), eq(n, 0.0), 0.0);
  return mul(scaled, scale);
}

}  // namespace

Tensor norm(const Tensor& a, double p, const std::vector<int64_t>& dims, bool keepdim) {
  if (auto ac = detail::autocast("norm", a)) return norm(ac[0], p, dims, keepdim);
  static OpHandle op = detail::op_handle(OpId::norm);
  detail::check_floating("norm", a, "input");
  HEARTH_CHECK(!std::isnan(p), ValueError, "[norm] p must be a number, got nan");
  detail::ReducePlan p_plan = detail::plan_reduction("norm", a, dims, keepdim);
  HEARTH_CHECK(!(std::isinf(p) && p_plan.inner == 0), ValueError, "[norm] the ", p > 0 ? "inf" : "-inf",
               "-norm of an empty selection is undefined (input shape ", a.shape_string(), ")");
  Tensor out = Tensor::empty({p_plan.outer}, a.dtype(), a.device());
  if (p_plan.outer > 0) detail::run(op, {p_plan.rows}, {out}, NormAttrs{p});
  out = out.view(p_plan.result_shape);
  if (autograd::any_requires_grad({a})) {
    autograd::record("NormBackward", {a}, {out},
                     [sa = SavedTensor(a), so = SavedTensor(out), p, keep = p_plan.keep_shape](const BackwardContext& c) {
                       Tensor x = sa.unpack(c.name());
                       Tensor n = so.unpack(c.name()).reshape(keep);
                       return std::vector<Tensor>{norm_backward(x, n, c.grad(0).reshape(keep), p, keep)};
                     });
  }
  return out;
}

}  // namespace hearth
