// amax, amin, max_dim, min_dim, argmax, argmin and Tensor::max/min/argmax: the
// extreme values of rows planned by plan_reduction. Gradients follow PyTorch:
// amax/amin split the gradient evenly among tied extremes, max_dim/min_dim send
// it to the returned index only.
#include "hearth/autograd/function.h"
#include "hearth/autograd/grad_mode.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/reduce_util.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

void check_nonempty_reduction(const char* op, const Tensor& a, const detail::ReducePlan& p,
                              const std::vector<int64_t>& dims) {
  HEARTH_CHECK(p.inner > 0, ValueError, "[", op, "] cannot reduce over a dimension of size 0 (input shape ",
               a.shape_string(), ", dims ", dims.empty() ? std::string("all") : shape_str(dims),
               "): the result of an empty reduction is undefined");
}

Tensor extreme_values(OpHandle op, const char* name, const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  detail::check_defined(name, a, "input");
  detail::ReducePlan p = detail::plan_reduction(name, a, dims, keepdim);
  check_nonempty_reduction(name, a, p, dims);
  Tensor out = Tensor::empty({p.outer}, a.dtype(), a.device());
  if (p.outer > 0) detail::run(op, {p.rows}, {out});
  out = out.view(p.result_shape);
  if (autograd::any_requires_grad({a})) {
    autograd::record(std::string(name) == "amax" ? "AmaxBackward" : "AminBackward", {a}, {out},
                     [sa = SavedTensor(a), so = SavedTensor(out), keep = p.keep_shape](const BackwardContext& c) {
                       Tensor x = sa.unpack(c.name());
                       Tensor r = so.unpack(c.name()).reshape(keep);
                       Tensor mask = cast(eq(x, r), x.dtype());
                       Tensor count = autograd::sum_to_shape(mask, keep);
                       return std::vector<Tensor>{mul(mask, div(c.grad(0).reshape(keep), count))};
                     });
  }
  return out;
}

// `label` is the function the user called, for messages (argmax runs max_dim).
std::pair<Tensor, Tensor> extreme_with_index(OpHandle op, const char* label, const Tensor& a, int64_t dim,
                                             bool keepdim) {
  detail::check_defined(label, a, "input");
  const int64_t d = wrap_dim(dim, a.dim(), label);
  detail::ReducePlan p = detail::plan_reduction(label, a, {d}, keepdim);
  check_nonempty_reduction(label, a, p, {dim});
  Tensor values = Tensor::empty({p.outer}, a.dtype(), a.device());
  Tensor indices = Tensor::empty({p.outer}, DType::int64, a.device());
  if (p.outer > 0) detail::run(op, {p.rows}, {values, indices});
  values = values.view(p.result_shape);
  indices = indices.view(p.result_shape);
  if (autograd::any_requires_grad({a})) {
    autograd::record(op->def.name == "max_dim" ? "MaxBackward" : "MinBackward", {a}, {values},
                     [si = SavedTensor(indices), shape = a.shape(), keep = p.keep_shape, d](const BackwardContext& c) {
                       const Tensor& g = c.grad(0);
                       if (shape.empty()) return std::vector<Tensor>{g.reshape(shape)};
                       Tensor idx = si.unpack(c.name()).reshape(keep);
                       Tensor z = zeros(shape, g.dtype(), g.device());
                       return std::vector<Tensor>{scatter_add(z, d, idx, g.reshape(keep))};
                     });
  }
  return {values, indices};
}

OpHandle amax_op() {
  static OpHandle op = detail::op_handle(OpId::amax);
  return op;
}
OpHandle amin_op() {
  static OpHandle op = detail::op_handle(OpId::amin);
  return op;
}
OpHandle max_dim_op() {
  static OpHandle op = detail::op_handle(OpId::max_dim);
  return op;
}
OpHandle min_dim_op() {
  static OpHandle op = detail::op_handle(OpId::min_dim);
  return op;
}

}  // namespace

Tensor amax(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme_values(amax_op(), "amax", a, dims, keepdim);
}

Tensor amin(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  return extreme_values(amin_op(), "amin", a, dims, keepdim);
}

std::pair<Tensor, Tensor> max_dim(const Tensor& a, int64_t dim, bool keepdim) {
  return extreme_with_index(max_dim_op(), "max_dim", a, dim, keepdim);
}

std::pair<Tensor, Tensor> min_dim(const Tensor& a, int64_t dim, bool keepdim) {
  return extreme_with_index(min_dim_op(), "min_dim", a, dim, keepdim);
}

Tensor argmax(const Tensor& a, int64_t dim, bool keepdim) {
  NoGradGuard no_grad;  // indices carry no gradient; skip recording the values' node
  return extreme_with_index(max_dim_op(), "argmax", a, dim, keepdim).second;
}

Tensor argmin(const Tensor& a, int64_t dim, bool keepdim) {
  NoGradGuard no_grad;
  return extreme_with_index(min_dim_op(), "argmin", a, dim, keepdim).second;
}

// Declared in tensor.h with the other math methods; defined beside their ops.
Tensor Tensor::max() const { return amax(*this); }
Tensor Tensor::min() const { return amin(*this); }
Tensor Tensor::argmax(int64_t dim, bool keepdim) const { return hearth::argmax(*this, dim, keepdim); }

}  // namespace hearth
