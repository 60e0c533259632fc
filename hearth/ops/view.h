// Views: new shapes and strides over the same storage, never a copy (reshape
// copies only when no view is possible). Differentiable; never dispatched, so
// they never fall back.
#pragma once

#include <vector>

#include "hearth/core/tensor.h"

namespace hearth {

Tensor view(const Tensor& a, const Shape& shape);  // one -1 allowed; needs compatible strides
Tensor reshape(const Tensor& a, const Shape& shape);
Tensor transpose(const Tensor& a, int64_t d0, int64_t d1);
Tensor permute(const Tensor& a, const std::vector<int64_t>& dims);
Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length);
// Python's a[start:end:step] on one dim (negative start/end wrap, clamped).
Tensor slice(const Tensor& a, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor select(const Tensor& a, int64_t dim, int64_t index);
Tensor expand(const Tensor& a, const Shape& shape);  // -1 keeps a size
Tensor squeeze(const Tensor& a);
Tensor squeeze(const Tensor& a, int64_t dim);
Tensor unsqueeze(const Tensor& a, int64_t dim);
Tensor flatten(const Tensor& a, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& a, int64_t dim, const Shape& sizes);
// Sliding windows of `size` with `step` along dim, as a new last dim.
Tensor unfold(const Tensor& a, int64_t dim, int64_t size, int64_t step);
Tensor as_strided(const Tensor& a, const Shape& shape, const Strides& strides, int64_t offset);
Tensor contiguous(const Tensor& a);
// `a` itself when already dense in `fmt`, else a copy laid out in `fmt`.
Tensor contiguous(const Tensor& a, MemoryFormat fmt);

}  // namespace hearth
