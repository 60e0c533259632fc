// var and std over any set of dims, with Bessel's `correction`. The kernel
// computes both in double by two passes; the gradient is the textbook one,
// 2 (x - mean) / (n - correction), scaled by 1 / (2 std) for std.
#include "hearth/dispatch/schemas/reduce_var.h"

#include "hearth/autograd/function.h"
#include "hearth/ops/autocast_policy.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/reduce_util.h"
#include "hearth/ops/reduction.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

Tensor variance(const char* name, const Tensor& a, const std::vector<int64_t>& dims, int64_t correction,
                bool keepdim, bool take_sqrt) {
  static OpHandle op = detail::op_handle(OpId::var);
  detail::check_floating(name, a, "input");
  detail::ReducePlan p = detail::plan_reduction(name, a, dims, keepdim);
  Tensor out = Tensor::empty({p.outer}, a.dtype(), a.device());
  if (p.outer > 0) detail::run(op, {p.rows}, {out}, VarAttrs{correction, take_sqrt});
  out = out.view(p.result_shape);
  if (autograd::any_requires_grad({a})) {
    const double dof = static_cast<double>(p.inner - correction);
    autograd::record(take_sqrt ? "StdBackward" : "VarBackward", {a}, {out},
                     [sa = SavedTensor(a), so = SavedTensor(out), dims, keep = p.keep_shape, dof,
                      take_sqrt](const BackwardContext& c) {
                       Tensor x = sa.unpack(c.name());
                       Tensor centered = sub(x, mean(x, dims, /*keepdim=*/true));
                       Tensor g = c.grad(0).reshape(keep);
                       // d var = 2 (x - mean) / dof; d std = d var / (2 std).
                       Tensor scale = take_sqrt ? div(g, mul(so.unpack(c.name()).reshape(keep), dof))
                                                : mul(g, 2.0 / dof);
                       return std::vector<Tensor>{mul(centered, scale)};
                     });
  }
  return out;
}

}  // namespace

Tensor var(const Tensor& a, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  if (auto ac = detail::autocast("var", a)) return var(ac[0], dims, correction, keepdim);
  return variance("var", a, dims, correction, keepdim, /*take_sqrt=*/false);
}

Tensor std(const Tensor& a, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  if (auto ac = detail::autocast("std", a)) return std(ac[0], dims, correction, keepdim);
  return variance("std", a, dims, correction, keepdim, /*take_sqrt=*/true);
}

}  // namespace hearth
