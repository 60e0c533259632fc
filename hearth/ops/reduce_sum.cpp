// sum and mean, and the shared recipe every reduction follows: move the reduced
// dims last, reduce contiguous rows in a backend kernel, restore kept dims.
#include "hearth/autograd/function.h"
#include "hearth/ops/autocast_policy.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/reduce_util.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {

namespace detail {

ReducePlan plan_reduction(const char* op, const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  ReducePlan p;
  const int64_t nd = a.dim();
  std::vector<bool> reduced(nd, dims.empty());
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, nd, op);
    if (nd == 0) continue;  // a zero-dim tensor reduces over its one element
    HEARTH_CHECK(!reduced[w] || dims.empty(), ValueError, "[", op, "] dim ", d, " appears more than once");
    reduced[w] = true;
  }
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < nd; ++d)
    if (!reduced[d]) {
      perm.push_back(d);
      p.out_shape.push_back(a.shape()[d]);
      p.outer *= a.shape()[d];
    }
  for (int64_t d = 0; d < nd; ++d)
    if (reduced[d]) {
      perm.push_back(d);
      p.inner *= a.shape()[d];
    }
  for (int64_t d = 0; d < nd; ++d) p.keep_shape.push_back(reduced[d] ? 1 : a.shape()[d]);
  if (!keepdim) p.result_shape = p.out_shape;
  else p.result_shape = p.keep_shape;
  Tensor moved = permute(a.detach(), perm);
  p.rows = reshape(contiguous(moved), {p.outer, p.inner});
  return p;
}

}  // namespace detail

Tensor sum(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  if (auto ac = detail::autocast("sum", a)) return sum(ac[0], dims, keepdim);
  static OpHandle op = detail::op_handle(OpId::sum);
  detail::check_defined("sum", a, "input");
  detail::ReducePlan p = detail::plan_reduction("sum", a, dims, keepdim);
  DType out_dtype = is_integral(a.dtype(), /*include_bool=*/true) ? DType::int64 : a.dtype();
  Tensor rows = p.rows.dtype() == out_dtype ? p.rows : cast(p.rows, out_dtype);
  Tensor out = Tensor::empty({p.outer}, out_dtype, a.device());
  if (p.inner == 0) fill_(out, 0);
  else if (p.outer > 0) detail::run(op, {rows}, {out});
  out = out.view(p.result_shape);
  autograd::record("SumBackward", {a}, {out}, [in_shape = a.shape(), keep = p.keep_shape](const autograd::BackwardContext& c) {
    return std::vector<Tensor>{expand(c.grad(0).reshape(keep), in_shape)};
  });
  return out;
}

Tensor mean(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  if (auto ac = detail::autocast("mean", a)) return mean(ac[0], dims, keepdim);
  detail::check_floating("mean", a, "input");
  detail::ReducePlan p = detail::plan_reduction("mean", a, dims, keepdim);
  return div(sum(a, dims, keepdim), static_cast<double>(p.inner));
}

}  // namespace hearth
