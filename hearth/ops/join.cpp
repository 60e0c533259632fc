// cat, stack, split and chunk. Joining copies each input into its slice of the
// output (copy_ does the dtype promotion), so it needs no kernel of its own;
// splitting returns narrow views, which are differentiable already.
#include "hearth/autograd/function.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

// PyTorch still accepts 1-D empty tensors in cat whatever the others' shapes are,
// and skips them.
bool is_skippable(const Tensor& t) { return t.dim() == 1 && t.shape()[0] == 0; }

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  HEARTH_CHECK(!tensors.empty(), ValueError, "[cat] expected a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i)
    HEARTH_CHECK(tensors[i].defined(), ValueError, "[cat] tensor ", i, " is undefined");
  common_device("cat", tensors);
  DType dtype = tensors[0].dtype();
  for (const Tensor& t : tensors) dtype = promote_types(dtype, t.dtype());

  // The first tensor that is not skipped fixes the rank and the other sizes.
  int64_t ref = -1;
  for (size_t i = 0; i < tensors.size() && ref < 0; ++i)
    if (!is_skippable(tensors[i])) ref = static_cast<int64_t>(i);
  if (ref < 0) return Tensor::empty({0}, dtype, tensors[0].device());
  const Tensor& r = tensors[ref];
  HEARTH_CHECK(r.dim() > 0, ShapeError, "[cat] tensor ", ref, " is zero-dimensional and cannot be concatenated");
  const int64_t d = wrap_dim(dim, r.dim(), "cat");
  Shape out_shape = r.shape();
  out_shape[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (is_skippable(t)) continue;
    HEARTH_CHECK(t.dim() == r.dim(), ShapeError, "[cat] tensor ", i, " has shape ", t.shape_string(), " but tensor ",
                 ref, " has shape ", r.shape_string(), ": all tensors need the same number of dimensions");
    for (int64_t k = 0; k < r.dim(); ++k)
      HEARTH_CHECK(k == d || t.shape()[k] == r.shape()[k], ShapeError, "[cat] sizes must match except in dimension ",
                   d, ": tensor ", i, " has shape ", t.shape_string(), " but tensor ", ref, " has shape ",
                   r.shape_string(), " (mismatch in dimension ", k, ")");
    out_shape[d] += t.shape()[d];
  }

  Tensor out = Tensor::empty(out_shape, dtype, r.device());
  std::vector<int64_t> offsets(tensors.size(), 0);
  int64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    offsets[i] = offset;
    if (is_skippable(t)) continue;
    const int64_t len = t.shape()[d];
    if (len > 0 && t.numel() > 0) copy_into(narrow(out, d, offset, len), t);
    offset += len;
  }

  if (autograd::any_requires_grad(tensors)) {
    std::vector<Shape> shapes;
    std::vector<DType> dtypes;
    for (const Tensor& t : tensors) {
      shapes.push_back(t.shape());
      dtypes.push_back(t.dtype());
    }
    autograd::record("CatBackward", tensors, {out},
                     [shapes, dtypes, offsets, d](const autograd::BackwardContext& c) {
                       std::vector<Tensor> grads(shapes.size());
                       for (size_t i = 0; i < shapes.size(); ++i) {
                         if (!c.needs(i)) continue;
                         const bool skipped = shapes[i].size() == 1 && shapes[i][0] == 0;
                         Tensor g = skipped ? Tensor::empty({0}, c.grad(0).dtype(), c.grad(0).device())
                                            : narrow(c.grad(0), d, offsets[i], shapes[i][d]);
                         grads[i] = g.dtype() == dtypes[i] ? g : cast(g, dtypes[i]);
                       }
                       return grads;
                     });
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  HEARTH_CHECK(!tensors.empty(), ValueError, "[stack] expected a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    HEARTH_CHECK(tensors[i].defined(), ValueError, "[stack] tensor ", i, " is undefined");
    HEARTH_CHECK(tensors[i].shape() == tensors[0].shape(), ShapeError, "[stack] expects tensors of equal shape, but "
                 "tensor 0 has shape ", tensors[0].shape_string(), " and tensor ", i, " has shape ",
                 tensors[i].shape_string());
  }
  const int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (const Tensor& t : tensors) parts.push_back(unsqueeze(t, d));
  return cat(parts, d);
}

std::vector<Tensor> split(const Tensor& a, const std::vector<int64_t>& sizes, int64_t dim) {
  detail::check_defined("split", a, "input");
  HEARTH_CHECK(a.dim() > 0, ShapeError, "[split] cannot split a zero-dimensional tensor");
  const int64_t d = wrap_dim(dim, a.dim(), "split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    HEARTH_CHECK(s >= 0, ValueError, "[split] split sizes must be non-negative, got ", shape_str(sizes));
    total += s;
  }
  HEARTH_CHECK(total == a.shape()[d], ValueError, "[split] split sizes ", shape_str(sizes), " sum to ", total,
               " but dimension ", d, " of the input ", a.shape_string(), " has size ", a.shape()[d]);
  std::vector<Tensor> parts;
  parts.reserve(sizes.size());
  int64_t start = 0;
  for (int64_t s : sizes) {
    parts.push_back(narrow(a, d, start, s));
    start += s;
  }
  return parts;
}

std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim) {
  detail::check_defined("split", a, "input");
  HEARTH_CHECK(a.dim() > 0, ShapeError, "[split] cannot split a zero-dimensional tensor");
  const int64_t d = wrap_dim(dim, a.dim(), "split");
  const int64_t n = a.shape()[d];
  HEARTH_CHECK(split_size > 0 || (split_size == 0 && n == 0), ValueError, "[split] split_size must be positive, got ",
               split_size, " for dimension ", d, " of size ", n);
  if (n == 0) return {a};
  std::vector<int64_t> sizes;
  for (int64_t start = 0; start < n; start += split_size) sizes.push_back(std::min(split_size, n - start));
  return split(a, sizes, d);
}

std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim) {
  detail::check_defined("chunk", a, "input");
  HEARTH_CHECK(chunks > 0, ValueError, "[chunk] number of chunks must be positive, got ", chunks);
  HEARTH_CHECK(a.dim() > 0, ShapeError, "[chunk] cannot chunk a zero-dimensional tensor");
  const int64_t d = wrap_dim(dim, a.dim(), "chunk");
  const int64_t n = a.shape()[d];
  if (n == 0) return split(a, std::vector<int64_t>(chunks, 0), d);
  return split(a, (n + chunks - 1) / chunks, d);
}

}  // namespace hearth
