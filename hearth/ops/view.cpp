// View ops: metadata over shared storage, with autograd. They are not dispatched
// (no kernel runs), which is why they never fall back.
#include "hearth/ops/view.h"

#include <algorithm>
#include <numeric>

#include "hearth/autograd/function.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/op_utils.h"

namespace hearth {
namespace {

using autograd::BackwardContext;

Shape infer_shape(const char* op, const Shape& shape, int64_t numel) {
  Shape out = shape;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      HEARTH_CHECK(infer < 0, ShapeError, "[", op, "] only one dimension can be inferred (-1) in ", shape_str(shape));
      infer = static_cast<int64_t>(i);
    } else {
      HEARTH_CHECK(out[i] >= 0, ShapeError, "[", op, "] invalid size ", out[i], " in shape ", shape_str(shape));
      known *= out[i];
    }
  }
  if (infer >= 0) {
    HEARTH_CHECK(known != 0 && numel % known == 0, ShapeError, "[", op, "] shape ", shape_str(shape),
                 " is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else {
    HEARTH_CHECK(known == numel, ShapeError, "[", op, "] shape ", shape_str(shape), " is invalid for input of size ",
                 numel);
  }
  return out;
}

// Strides for viewing (shape, strides) as new_shape without copying, or false
// if impossible (PyTorch's computeStride).
bool compute_view_strides(const Shape& old_shape, const Strides& old_strides, const Shape& new_shape,
                          Strides* out) {
  if (old_shape.empty()) {
    *out = Strides(new_shape.size(), 1);
    return true;
  }
  int64_t numel = numel_of(old_shape);
  if (numel == 0) {
    *out = contiguous_strides(new_shape);
    return true;
  }
  Strides ns(new_shape.size());
  int64_t view_d = static_cast<int64_t>(new_shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t td = static_cast<int64_t>(old_shape.size()) - 1; td >= 0; --td) {
    tensor_numel *= old_shape[td];
    if (td == 0 || (old_shape[td - 1] != 1 && old_strides[td - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
        ns[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (td > 0) {
        chunk_base_stride = old_strides[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return false;
  *out = ns;
  return true;
}

// Makes `out` a differentiable view of `a` whose backward is `fn`.
Tensor record_view(const char* name, const Tensor& a, Tensor out,
                   std::function<Tensor(const Tensor&)> grad_fn) {
  autograd::record(name, {a}, {out}, [f = std::move(grad_fn)](const BackwardContext& c) {
    return std::vector<Tensor>{f(c.grad(0))};
  });
  return out;
}

}  // namespace

Tensor view(const Tensor& a, const Shape& shape) {
  detail::check_defined("view", a, "input");
  Shape s = infer_shape("view", shape, a.numel());
  Strides st;
  HEARTH_CHECK(compute_view_strides(a.shape(), a.strides(), s, &st), ShapeError, "[view] size ", shape_str(s),
               " is not compatible with the input's size ", a.shape_string(), " and strides ",
               shape_str(a.strides()), " (at least one dimension spans two contiguous subspaces); use reshape()");
  Tensor out = a.as_strided_view(s, st, a.offset());
  Shape in_shape = a.shape();
  return record_view("ViewBackward", a, out, [in_shape](const Tensor& g) { return reshape(g, in_shape); });
}

Tensor reshape(const Tensor& a, const Shape& shape) {
  detail::check_defined("reshape", a, "input");
  Shape s = infer_shape("reshape", shape, a.numel());
  Strides st;
  if (compute_view_strides(a.shape(), a.strides(), s, &st)) return view(a, s);
  return view(contiguous(a), s);
}

Tensor transpose(const Tensor& a, int64_t d0, int64_t d1) {
  detail::check_defined("transpose", a, "input");
  if (a.dim() == 0) return a;
  d0 = wrap_dim(d0, a.dim(), "transpose");
  d1 = wrap_dim(d1, a.dim(), "transpose");
  Shape s = a.shape();
  Strides st = a.strides();
  std::swap(s[d0], s[d1]);
  std::swap(st[d0], st[d1]);
  Tensor out = a.as_strided_view(s, st, a.offset());
  return record_view("TransposeBackward", a, out, [d0, d1](const Tensor& g) { return transpose(g, d0, d1); });
}

Tensor permute(const Tensor& a, const std::vector<int64_t>& dims) {
  detail::check_defined("permute", a, "input");
  HEARTH_CHECK(static_cast<int64_t>(dims.size()) == a.dim(), ShapeError, "[permute] number of dims (", dims.size(),
               ") does not match the input's ", a.dim(), " dimensions");
  std::vector<int64_t> p(dims.size());
  std::vector<bool> seen(dims.size(), false);
  Shape s(dims.size());
  Strides st(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    p[i] = wrap_dim(dims[i], a.dim(), "permute");
    HEARTH_CHECK(!seen[p[i]], ValueError, "[permute] dim ", dims[i], " repeated in ", shape_str(dims));
    seen[p[i]] = true;
    s[i] = a.shape()[p[i]];
    st[i] = a.strides()[p[i]];
  }
  Tensor out = a.as_strided_view(s, st, a.offset());
  std::vector<int64_t> inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[p[i]] = static_cast<int64_t>(i);
  return record_view("PermuteBackward", a, out, [inv](const Tensor& g) { return permute(g, inv); });
}

Tensor slice(const Tensor& a, int64_t dim, int64_t start, int64_t end, int64_t step) {
  detail::check_defined("slice", a, "input");
  HEARTH_CHECK(a.dim() > 0, ShapeError, "[slice] cannot slice a zero-dim tensor");
  HEARTH_CHECK(step > 0, ValueError, "[slice] step must be positive, got ", step);
  dim = wrap_dim(dim, a.dim(), "slice");
  int64_t n = a.shape()[dim];
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape s = a.shape();
  Strides st = a.strides();
  s[dim] = (end - start + step - 1) / step;
  st[dim] *= step;
  Tensor out = a.as_strided_view(s, st, a.offset() + start * a.strides()[dim]);
  Shape in_shape = a.shape();
  DType dt = a.dtype();
  return record_view("SliceBackward", a, out, [=](const Tensor& g) {
    Tensor z = zeros(in_shape, dt, g.device());
    Tensor dst = slice(z, dim, start, end, step);
    copy_(dst, g);
    return z;
  });
}

Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length) {
  detail::check_defined("narrow", a, "input");
  dim = wrap_dim(dim, a.dim(), "narrow");
  int64_t n = a.shape()[dim];
  if (start < 0) start += n;
  HEARTH_CHECK(start >= 0 && length >= 0 && start + length <= n, ShapeError, "[narrow] start (", start,
               ") + length (", length, ") exceeds dimension size (", n, ")");
  return slice(a, dim, start, start + length, 1);
}

Tensor select(const Tensor& a, int64_t dim, int64_t index) {
  detail::check_defined("select", a, "input");
  HEARTH_CHECK(a.dim() > 0, ShapeError, "[select] cannot select from a zero-dim tensor");
  dim = wrap_dim(dim, a.dim(), "select");
  int64_t n = a.shape()[dim];
  HEARTH_CHECK(index >= -n && index < n, ShapeError, "[select] index ", index, " is out of bounds for dimension ",
               dim, " with size ", n);
  if (index < 0) index += n;
  Shape s = a.shape();
  Strides st = a.strides();
  int64_t off = a.offset() + index * st[dim];
  s.erase(s.begin() + dim);
  st.erase(st.begin() + dim);
  Tensor out = a.as_strided_view(s, st, off);
  return record_view("SelectBackward", a, out, [dim, index, in_shape = a.shape(), dt = a.dtype()](const Tensor& g) {
    Tensor z = zeros(in_shape, dt, g.device());
    Tensor dst = select(z, dim, index);
    copy_(dst, g);
    return z;
  });
}

Tensor expand(const Tensor& a, const Shape& shape) {
  detail::check_defined("expand", a, "input");
  HEARTH_CHECK(static_cast<int64_t>(shape.size()) >= a.dim(), ShapeError, "[expand] the number of sizes (",
               shape.size(), ") must be at least the tensor's dimensions (", a.dim(), ")");
  int64_t lead = static_cast<int64_t>(shape.size()) - a.dim();
  Shape s(shape.size());
  Strides st(shape.size());
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    if (i < lead) {
      HEARTH_CHECK(shape[i] >= 0, ShapeError, "[expand] size -1 not allowed in a new leading dimension");
      s[i] = shape[i];
      st[i] = 0;
      continue;
    }
    int64_t cur = a.shape()[i - lead];
    int64_t want = shape[i] == -1 ? cur : shape[i];
    HEARTH_CHECK(cur == want || cur == 1, ShapeError, "[expand] the expanded size ", want,
                 " must match the existing size ", cur, " at non-singleton dimension ", i, " (target ",
                 shape_str(shape), ", tensor ", a.shape_string(), ")");
    s[i] = want;
    st[i] = cur == want ? a.strides()[i - lead] : 0;
  }
  if (s == a.shape()) return a;
  Tensor out = a.as_strided_view(s, st, a.offset());
  return record_view("ExpandBackward", a, out,
                     [in_shape = a.shape()](const Tensor& g) { return autograd::sum_to_shape(g, in_shape); });
}

Tensor squeeze(const Tensor& a) {
  detail::check_defined("squeeze", a, "input");
  Shape s;
  for (int64_t d : a.shape())
    if (d != 1) s.push_back(d);
  return s == a.shape() ? a : view(a, s);
}

Tensor squeeze(const Tensor& a, int64_t dim) {
  detail::check_defined("squeeze", a, "input");
  if (a.dim() == 0) return a;
  dim = wrap_dim(dim, a.dim(), "squeeze");
  if (a.shape()[dim] != 1) return a;
  Shape s = a.shape();
  s.erase(s.begin() + dim);
  return view(a, s);
}

Tensor unsqueeze(const Tensor& a, int64_t dim) {
  detail::check_defined("unsqueeze", a, "input");
  dim = wrap_dim(dim, a.dim() + 1, "unsqueeze");
  Shape s = a.shape();
  Strides st = a.strides();
  int64_t new_stride = dim < a.dim() ? a.shape()[dim] * a.strides()[dim] : 1;
  s.insert(s.begin() + dim, 1);
  st.insert(st.begin() + dim, new_stride);
  Tensor out = a.as_strided_view(s, st, a.offset());
  return record_view("UnsqueezeBackward", a, out, [dim](const Tensor& g) { return squeeze(g, dim); });
}

Tensor flatten(const Tensor& a, int64_t start_dim, int64_t end_dim) {
  detail::check_defined("flatten", a, "input");
  if (a.dim() == 0) return reshape(a, {1});
  start_dim = wrap_dim(start_dim, a.dim(), "flatten");
  end_dim = wrap_dim(end_dim, a.dim(), "flatten");
  HEARTH_CHECK(start_dim <= end_dim, ShapeError, "[flatten] start_dim (", start_dim, ") must not exceed end_dim (",
               end_dim, ")");
  Shape s(a.shape().begin(), a.shape().begin() + start_dim);
  int64_t m = 1;
  for (int64_t d = start_dim; d <= end_dim; ++d) m *= a.shape()[d];
  s.push_back(m);
  s.insert(s.end(), a.shape().begin() + end_dim + 1, a.shape().end());
  return reshape(a, s);
}

Tensor unflatten(const Tensor& a, int64_t dim, const Shape& sizes) {
  detail::check_defined("unflatten", a, "input");
  dim = wrap_dim(dim, a.dim(), "unflatten");
  Shape inner = infer_shape("unflatten", sizes, a.shape()[dim]);
  Shape s(a.shape().begin(), a.shape().begin() + dim);
  s.insert(s.end(), inner.begin(), inner.end());
  s.insert(s.end(), a.shape().begin() + dim + 1, a.shape().end());
  return view(a, s);
}

Tensor as_strided(const Tensor& a, const Shape& shape, const Strides& strides, int64_t offset) {
  detail::check_defined("as_strided", a, "input");
  HEARTH_CHECK(!autograd::any_requires_grad({a}), NotImplementedError,
               "[as_strided] is not differentiable; build the view from view/slice/unfold instead");
  return a.as_strided_view(shape, strides, offset);
}

Tensor unfold(const Tensor& a, int64_t dim, int64_t size, int64_t step) {
  detail::check_defined("unfold", a, "input");
  HEARTH_CHECK(size >= 0 && step > 0, ValueError, "[unfold] size must be >= 0 and step > 0, got size ", size,
               " step ", step);
  dim = wrap_dim(dim, a.dim(), "unfold");
  int64_t n = a.dim() == 0 ? 1 : a.shape()[dim];
  HEARTH_CHECK(size <= n, ShapeError, "[unfold] size ", size, " exceeds dimension ", dim, " of size ", n);
  Shape s = a.shape();
  Strides st = a.strides();
  int64_t windows = (n - size) / step + 1;
  int64_t dstride = a.dim() == 0 ? 1 : st[dim];
  if (a.dim() > 0) {
    s[dim] = windows;
    st[dim] = dstride * step;
  }
  s.push_back(size);
  st.push_back(dstride);
  Tensor out = a.as_strided_view(s, st, a.offset());
  // Captures only sizes: holding `a` itself would keep its memory alive with the graph.
  const bool zero_dim = a.dim() == 0;
  return record_view("UnfoldBackward", a, out,
                     [zero_dim, dim, size, step, windows, in_shape = a.shape(), dt = a.dtype()](const Tensor& g) {
                       if (zero_dim) return size == 1 ? reshape(g, {}) : zeros({}, dt, g.device());
                       Tensor z = zeros(in_shape, dt, g.device());
                       if (g.numel() == 0) return z;
                       // Element k of every window lands at k, k + step, k + 2 step, ...: distinct
                       // positions, so one strided add per k accumulates overlapping windows
                       // correctly, in `size` ops rather than one per window.
                       for (int64_t k = 0; k < size; ++k)
                         add_(slice(z, dim, k, k + (windows - 1) * step + 1, step), select(g, -1, k));
                       return z;
                     });
}

}  // namespace hearth
