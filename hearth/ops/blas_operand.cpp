#include "hearth/ops/blas_operand.h"

#include <algorithm>

#include "hearth/ops/view.h"

namespace hearth::detail {

Tensor blas_operand(const Tensor& t) {
  const int64_t r = t.size(1), c = t.size(2);
  Strides st = t.strides();
  if (t.size(0) == 1) st[0] = r * c;
  if (r == 1) st[1] = st[2] == 1 ? std::max<int64_t>(c, 1) : 1;
  if (c == 1) st[2] = st[1] == 1 ? std::max<int64_t>(r, 1) : 1;
  const bool row_major = st[2] == 1 && st[1] >= std::max<int64_t>(c, 1);
  const bool col_major = st[1] == 1 && st[2] >= std::max<int64_t>(r, 1);
  if (row_major || col_major) return st == t.strides() ? t : t.as_strided_view(t.shape(), st, t.offset());
  return blas_operand(contiguous(t));
}

}  // namespace hearth::detail
