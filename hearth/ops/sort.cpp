// sort and topk along one dim. Both move that dim last so the kernels sort dense
// rows, then move it back. The gradient of the values goes to the positions the
// indices name (a scatter into zeros).
#include "hearth/dispatch/schemas/sort.h"

#include "hearth/autograd/function.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

// `a` (detached) with `d` swapped to the end, as dense rows [outer, n].
struct Rows {
  Tensor rows;
  Shape moved_shape;  // a's shape with d and the last dim swapped
};

Rows rows_along(const Tensor& a, int64_t d) {
  Rows r;
  Tensor moved = a.dim() == 0 ? a.detach().reshape({1}) : transpose(a.detach(), d, -1);
  r.moved_shape = moved.shape();
  const int64_t n = r.moved_shape.back();
  const int64_t outer = numel_of(Shape(r.moved_shape.begin(), r.moved_shape.end() - 1));
  r.rows = contiguous(moved).reshape({outer, n});
  return r;
}

// Undoes rows_along for an output of `k` entries per row, as a dense tensor.
Tensor unrows(const Tensor& t, const Rows& r, int64_t d, int64_t k, const Shape& a_shape) {
  if (a_shape.empty()) return k == 1 ? t.reshape({}) : t.reshape({k});
  Shape s = r.moved_shape;
  s.back() = k;
  return contiguous(transpose(t.view(s), d, -1));
}

// Records the scatter-to-indices gradient shared by sort and topk.
void record_select_backward(const char* name, const Tensor& a, const Tensor& values, const Tensor& indices,
                            int64_t d) {
  if (!autograd::any_requires_grad({a})) return;
  autograd::record(name, {a}, {values}, [si = SavedTensor(indices), shape = a.shape(), d](const BackwardContext& c) {
    const Tensor& g = c.grad(0);
    if (shape.empty()) return std::vector<Tensor>{g};
    Tensor z = zeros(shape, g.dtype(), g.device());
    return std::vector<Tensor>{scatter_add(z, d, si.unpack(c.name()), g)};
  });
}

}  // namespace

std::pair<Tensor, Tensor> sort(const Tensor& a, int64_t dim, bool descending) {
  static OpHandle op = detail::op_handle(OpId::sort);
  detail::check_defined("sort", a, "input");
  const int64_t d = wrap_dim(dim, a.dim(), "sort");
  Rows r = rows_along(a, d);
  const int64_t outer = r.rows.shape()[0], n = r.rows.shape()[1];
  Tensor values = Tensor::empty({outer, n}, a.dtype(), a.device());
  Tensor indices = Tensor::empty({outer, n}, DType::int64, a.device());
  if (values.numel() > 0) detail::run(op, {r.rows}, {values, indices}, SortAttrs{descending});
  values = unrows(values, r, d, n, a.shape());
  indices = unrows(indices, r, d, n, a.shape());
  record_select_backward("SortBackward", a, values, indices, d);
  return {values, indices};
}

// Results are always sorted (best first); `sorted = false` allows any order, so
// it is served the same way.
std::pair<Tensor, Tensor> topk(const Tensor& a, int64_t k, int64_t dim, bool largest, bool /*sorted*/) {
  static OpHandle op = detail::op_handle(OpId::topk);
  detail::check_defined("topk", a, "input");
  const int64_t d = wrap_dim(dim, a.dim(), "topk");
  const int64_t n = a.dim() == 0 ? 1 : a.shape()[d];
  HEARTH_CHECK(k >= 0 && k <= n, ValueError, "[topk] k (", k, ") is out of range for dimension ", d, " of size ", n,
               " (input shape ", a.shape_string(), ")");
  Rows r = rows_along(a, d);
  const int64_t outer = r.rows.shape()[0];
  Tensor values = Tensor::empty({outer, k}, a.dtype(), a.device());
  Tensor indices = Tensor::empty({outer, k}, DType::int64, a.device());
  if (values.numel() > 0) detail::run(op, {r.rows}, {values, indices}, TopkAttrs{k, largest});
  values = unrows(values, r, d, k, a.shape());
  indices = unrows(indices, r, d, k, a.shape());
  record_select_backward("TopkBackward", a, values, indices, d);
  return {values, indices};
}

}  // namespace hearth
