// index_select, gather, scatter_add(_) and one_hot. Index values are checked
// here on the host when the index lives on the CPU, where reading it is free,
// so CPU kernels see only valid indices from CPU callers. On other devices
// reading the index back would stall the device on every call, so the kernels
// guard every index themselves (an out-of-range one is skipped and reported,
// never used to touch memory); HEARTH_CHECK_INDICES=1 turns the host check on
// for every device, to raise at the call that passes a bad index. Gradients
// pair up: gather's is scatter_add, scatter_add's is gather, and
// index_select's is a scatter_add of the index broadcast along the rows.
#include "hearth/dispatch/schemas/index.h"

#include "hearth/autograd/function.h"
#include "hearth/core/switch_list.h"
#include "hearth/ops/autocast_policy.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

void check_index_dtype(const char* op, const Tensor& index) {
  detail::check_defined(op, index, "index");
  HEARTH_CHECK(index.dtype() == DType::int64, TypeError, "[", op, "] expected an int64 index tensor, got ",
               dtype_name(index.dtype()));
}

// Whether index values are checked here (see the top of the file).
bool check_on_host(const Tensor& index) { return index.device().is_cpu() || switches::check_indices().get(); }

// Every index value must lie in [0, size); names the first bad value found.
void check_index_range(const char* op, const Tensor& index, int64_t size, int64_t dim) {
  if (index.numel() == 0 || !check_on_host(index)) return;
  const int64_t lo = amin(index).item<int64_t>();
  const int64_t hi = amax(index).item<int64_t>();
  const int64_t bad = lo < 0 ? lo : hi;
  HEARTH_CHECK(lo >= 0 && hi < size, ValueError, "[", op, "] index ", bad, " is out of bounds for dimension ", dim,
               " with size ", size);
}

// Checks shared by gather and scatter_add: same rank, index no larger than
// `a` in every dim but `dim`.
void check_index_shape(const char* op, const Tensor& a, const Tensor& index, int64_t dim, const char* a_name) {
  HEARTH_CHECK(index.dim() == a.dim(), ShapeError, "[", op, "] index ", index.shape_string(),
               " must have as many dims as ", a_name, " ", a.shape_string());
  for (int64_t d = 0; d < a.dim(); ++d)
    HEARTH_CHECK(d == dim || index.shape()[d] <= a.shape()[d], ShapeError, "[", op, "] index ", index.shape_string(),
                 " is larger than ", a_name, " ", a.shape_string(), " in dimension ", d);
}

// The gradient of src for scatter_add: the gathered gradient, padded with zeros
// where src is larger than the index.
Tensor gather_into_shape(const Tensor& g, int64_t dim, const Tensor& index, const Shape& src_shape) {
  Tensor gathered = gather(g, dim, index);
  if (gathered.shape() == src_shape) return gathered;
  Tensor z = zeros(src_shape, g.dtype(), g.device());
  Tensor region = z;
  for (int64_t d = 0; d < static_cast<int64_t>(src_shape.size()); ++d) region = narrow(region, d, 0, index.shape()[d]);
  copy_(region, gathered);
  return z;
}

Tensor scatter_add_impl(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src, const Tensor& out,
                        const char* name) {
  static OpHandle op = detail::op_handle(OpId::scatter_add);
  detail::check_defined(name, a, "input");
  detail::check_defined(name, src, "src");
  check_index_dtype(name, index);
  HEARTH_CHECK(a.dtype() == src.dtype(), TypeError, "[", name, "] src dtype ", dtype_name(src.dtype()),
               " must match the input's dtype ", dtype_name(a.dtype()));
  common_device(name, {a, index, src});
  const int64_t d = wrap_dim(dim, a.dim(), name);
  HEARTH_CHECK(src.dim() == a.dim(), ShapeError, "[", name, "] src ", src.shape_string(),
               " must have as many dims as the input ", a.shape_string());
  check_index_shape(name, a, index, d, "input");
  for (int64_t i = 0; i < index.dim(); ++i)
    HEARTH_CHECK(index.shape()[i] <= src.shape()[i], ShapeError, "[", name, "] index ", index.shape_string(),
                 " is larger than src ", src.shape_string(), " in dimension ", i);
  if (a.dim() == 0) {  // one element: the index must be 0
    check_index_range(name, index, 1, 0);
    detail::run(op, {a.reshape({1}), index.reshape({1}), src.reshape({1})}, {out.reshape({1})}, IndexDimAttrs{0});
    return out;
  }
  check_index_range(name, index, a.shape()[d], d);
  detail::run(op, {a, index, src}, {out}, IndexDimAttrs{d});
  return out;
}

}  // namespace

Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index) {
  static OpHandle op = detail::op_handle(OpId::index_select);
  detail::check_defined("index_select", a, "input");
  check_index_dtype("index_select", index);
  HEARTH_CHECK(index.dim() <= 1, ShapeError, "[index_select] index must be 0-D or 1-D, got shape ",
               index.shape_string());
  common_device("index_select", {a, index});
  if (a.dim() == 0) {
    wrap_dim(dim, 0, "index_select");
    Tensor r = index_select(a.reshape({1}), 0, index);
    return index.dim() == 0 ? r.reshape({}) : r;
  }
  const int64_t d = wrap_dim(dim, a.dim(), "index_select");
  Tensor idx = contiguous(index.reshape({-1}));
  check_index_range("index_select", idx, a.shape()[d], d);
  const int64_t k = idx.numel();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < a.dim(); ++i) {
    if (i < d) outer *= a.shape()[i];
    if (i > d) inner *= a.shape()[i];
  }
  Shape out_shape = a.shape();
  out_shape[d] = k;
  Tensor out = Tensor::empty(out_shape, a.dtype(), a.device());
  if (out.numel() > 0) {
    Tensor x = contiguous(a.detach()).view({outer, a.shape()[d], inner});
    detail::run(op, {x, idx}, {out.view({outer, k, inner})}, IndexDimAttrs{d});
  }
  if (autograd::any_requires_grad({a})) {
    autograd::record("IndexSelectBackward", {a}, {out},
                     [si = SavedTensor(idx), shape = a.shape(), d](const BackwardContext& c) {
                       const Tensor& g = c.grad(0);
                       Shape along(shape.size(), 1);
                       along[d] = g.shape()[d];
                       Tensor idx_full = expand(si.unpack(c.name()).view(along), g.shape());
                       Tensor z = zeros(shape, g.dtype(), g.device());
                       return std::vector<Tensor>{scatter_add(z, d, idx_full, g)};
                     });
  }
  return out;
}

Tensor gather(const Tensor& a, int64_t dim, const Tensor& index) {
  static OpHandle op = detail::op_handle(OpId::gather);
  detail::check_defined("gather", a, "input");
  check_index_dtype("gather", index);
  common_device("gather", {a, index});
  const int64_t d = wrap_dim(dim, a.dim(), "gather");
  check_index_shape("gather", a, index, d, "input");
  Tensor out = Tensor::empty(index.shape(), a.dtype(), a.device());
  if (a.dim() == 0) {
    check_index_range("gather", index, 1, 0);
    detail::run(op, {a.detach().reshape({1}), index.reshape({1})}, {out.reshape({1})}, IndexDimAttrs{0});
  } else {
    check_index_range("gather", index, a.shape()[d], d);
    if (out.numel() > 0) detail::run(op, {a.detach(), index}, {out}, IndexDimAttrs{d});
  }
  if (autograd::any_requires_grad({a})) {
    autograd::record("GatherBackward", {a}, {out},
                     [si = SavedTensor(index), shape = a.shape(), d](const BackwardContext& c) {
                       const Tensor& g = c.grad(0);
                       Tensor z = zeros(shape, g.dtype(), g.device());
                       return std::vector<Tensor>{scatter_add(z, d, si.unpack(c.name()), g)};
                     });
  }
  return out;
}

Tensor scatter_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src) {
  if (auto ac = detail::autocast("scatter_add", a, index, src)) return scatter_add(ac[0], dim, ac[1], ac[2]);
  detail::check_defined("scatter_add", a, "input");
  Tensor out = Tensor::empty(a.shape(), a.dtype(), a.device());
  scatter_add_impl(a.detach(), dim, index, src.defined() ? src.detach() : src, out, "scatter_add");
  if (autograd::any_requires_grad({a, src})) {
    const int64_t d = wrap_dim(dim, a.dim(), "scatter_add");
    autograd::record("ScatterAddBackward", {a, src}, {out},
                     [si = SavedTensor(index), src_shape = src.shape(), d](const BackwardContext& c) {
                       const Tensor& g = c.grad(0);
                       Tensor gsrc;
                       if (c.needs(1)) {
                         if (g.dim() == 0)
                           gsrc = g.reshape(src_shape);
                         else
                           gsrc = gather_into_shape(g, d, si.unpack(c.name()), src_shape);
                       }
                       return std::vector<Tensor>{c.needs(0) ? g : Tensor(), gsrc};
                     });
  }
  return out;
}

const Tensor& scatter_add_(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src) {
  detail::check_defined("scatter_add_", a, "input");
  detail::check_inplace_allowed("scatter_add_", a);
  HEARTH_CHECK(!autograd::any_requires_grad({a, src}), AutogradError,
               "[scatter_add_] in-place ops on tensors that require grad are not supported; use scatter_add()");
  scatter_add_impl(a, dim, index, src, a, "scatter_add_");
  a.bump_version();
  return a;
}

Tensor one_hot(const Tensor& index, int64_t num_classes) {
  check_index_dtype("one_hot", index);
  HEARTH_CHECK(num_classes >= -1, ValueError, "[one_hot] num_classes must be -1 (infer) or >= 0, got ", num_classes);
  HEARTH_CHECK(num_classes >= 0 || index.numel() > 0, ValueError,
               "[one_hot] cannot infer num_classes from an empty index; pass num_classes explicitly");
  // Inferring the class count reads the index anyway, so then it is checked too.
  if (index.numel() > 0 && (num_classes == -1 || check_on_host(index))) {
    const int64_t lo = amin(index).item<int64_t>(), hi = amax(index).item<int64_t>();
    HEARTH_CHECK(lo >= 0, ValueError, "[one_hot] class values must be non-negative, got ", lo);
    if (num_classes == -1) num_classes = hi + 1;
    HEARTH_CHECK(hi < num_classes, ValueError, "[one_hot] class value ", hi, " is out of range for num_classes ",
                 num_classes);
  }
  Shape shape = index.shape();
  shape.push_back(num_classes);
  Tensor out = zeros(shape, DType::int64, index.device());
  if (index.numel() == 0) return out;
  Tensor idx = unsqueeze(index, -1);
  scatter_add_(out, -1, idx, ones(idx.shape(), DType::int64, index.device()));
  return out;
}

}  // namespace hearth
