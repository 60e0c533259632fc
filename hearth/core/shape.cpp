#include "hearth/core/shape.h"

#include <sstream>

#include "hearth/core/checked_size.h"
#include "hearth/core/errors.h"

namespace hearth {

int64_t numel_of(const Shape& shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    if (__builtin_mul_overflow(n, s, &n))
      HEARTH_THROW(ShapeError, "[tensor] shape ", shape_str(shape), " has more elements than fit in int64");
  return n;
}

size_t checked_nbytes(const Shape& shape, size_t element_size) {
  for (int64_t s : shape) HEARTH_CHECK(s >= 0, ShapeError, "[tensor] negative dimension in shape ", shape_str(shape));
  const int64_t n = numel_of(shape);
  int64_t bytes = 0;
  HEARTH_CHECK(!__builtin_mul_overflow(n, static_cast<int64_t>(element_size), &bytes), ShapeError, "[tensor] shape ",
               shape_str(shape), " of ", n, " elements of ", element_size, " bytes has more bytes than fit in int64");
  return static_cast<size_t>(bytes);
}

Strides contiguous_strides(const Shape& shape) {
  Strides st(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = acc;
    acc *= shape[i] > 0 ? shape[i] : 1;
  }
  return st;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t lo = ndim == 0 ? -1 : -ndim, hi = ndim == 0 ? 0 : ndim - 1;
  HEARTH_CHECK(dim >= lo && dim <= hi, ShapeError, "[", op, "] dimension out of range (expected to be in range of [",
               lo, ", ", hi, "], but got ", dim, ")");
  if (ndim == 0) return 0;
  return dim < 0 ? dim + ndim : dim;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    HEARTH_CHECK(da == db || da == 1 || db == 1, ShapeError, "[", op, "] shapes ", shape_str(a), " and ",
                 shape_str(b), " cannot be broadcast: size ", da, " vs ", db, " at dimension ", i);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool is_contiguous_layout(const Shape& shape, const Strides& strides) {
  // No element, no layout: an empty tensor is contiguous whatever its strides.
  for (int64_t s : shape)
    if (s == 0) return true;
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

}  // namespace hearth
