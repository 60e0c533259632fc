// cumsum along any dim. Integer and bool inputs sum in int64 (as PyTorch). The
// gradient of a cumulative sum is the reverse cumulative sum of the gradient,
// which the same kernel computes with ScanAttrs::reverse.
#include "hearth/dispatch/schemas/scan.h"

#include "hearth/autograd/function.h"
#include "hearth/ops/autocast_policy.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

Tensor scan_sum(const Tensor& a, int64_t dim, bool reverse) {
  static OpHandle op = detail::op_handle(OpId::cumsum);
  detail::check_defined("cumsum", a, "input");
  const int64_t d = wrap_dim(dim, a.dim(), "cumsum");
  const DType out_dtype = is_integral(a.dtype(), /*include_bool=*/true) ? DType::int64 : a.dtype();
  Tensor x = a.detach();
  if (x.dtype() != out_dtype) x = cast(x, out_dtype);
  x = contiguous(x);
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t i = 0; i < a.dim(); ++i) {
    if (i < d) outer *= a.shape()[i];
    else if (i == d) n = a.shape()[i];
    else inner *= a.shape()[i];
  }
  Tensor out = Tensor::empty(a.shape(), out_dtype, a.device());
  if (out.numel() > 0)
    detail::run(op, {x.view({outer, n, inner})}, {out.view({outer, n, inner})}, ScanAttrs{reverse});
  autograd::record(reverse ? "ReverseCumsumBackward" : "CumsumBackward", {a}, {out},
                   [d, reverse](const autograd::BackwardContext& c) {
                     return std::vector<Tensor>{scan_sum(c.grad(0), d, !reverse)};
                   });
  return out;
}

}  // namespace

Tensor cumsum(const Tensor& a, int64_t dim) {
  if (auto ac = detail::autocast("cumsum", a)) return cumsum(ac[0], dim);
  return scan_sum(a, dim, /*reverse=*/false);
}

}  // namespace hearth
