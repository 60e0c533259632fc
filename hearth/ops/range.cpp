// arange, linspace and eye. The values are computed by a kernel on the target
// device (no host buffer to copy), and each element depends only on its index.
#include "hearth/dispatch/schemas/range.h"

#include <algorithm>
#include <cmath>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/op_utils.h"

namespace hearth {

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, DType dtype, Device device) {
  static OpHandle op = detail::op_handle(OpId::arange_);
  HEARTH_CHECK(dtype != DType::bool_, TypeError, "[arange] is not supported for dtype bool");
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  HEARTH_CHECK(std::isfinite(s) && std::isfinite(e), ValueError, "[arange] start and end must be finite, got start=", s,
               " end=", e);
  HEARTH_CHECK(st != 0, ValueError, "[arange] step must be nonzero");
  HEARTH_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), ValueError,
               "[arange] the step's sign must lead from start to end, got start=", s, " end=", e, " step=", st);
  int64_t n;
  if (start.category() != DTypeCategory::floating && end.category() != DTypeCategory::floating &&
      step.category() != DTypeCategory::floating) {
    // Integer ranges count exactly (double division can round past the end).
    const int64_t a = start.to_int(), b = end.to_int(), k = step.to_int();
    n = k > 0 ? (b - a + k - 1) / k : (a - b + (-k) - 1) / (-k);
  } else {
    n = static_cast<int64_t>(std::ceil((e - s) / st));
  }
  Tensor t = Tensor::empty({n}, dtype, device);
  if (n > 0) detail::run(op, {}, {t}, RangeAttrs{start, step});
  return t;
}

Tensor arange(const Scalar& end, DType dtype, Device device) { return arange(0, end, 1, dtype, device); }
Tensor arange(int64_t end, Device device) {
  return arange(Scalar(int64_t{0}), Scalar(end), Scalar(int64_t{1}), DType::int64, device);
}

Tensor linspace(double start, double end, int64_t steps, DType dtype, Device device) {
  static OpHandle op = detail::op_handle(OpId::linspace_);
  HEARTH_CHECK(steps >= 0, ValueError, "[linspace] number of steps must be non-negative, got ", steps);
  HEARTH_CHECK(dtype != DType::bool_, TypeError, "[linspace] is not supported for dtype bool");
  Tensor t = Tensor::empty({steps}, dtype, device);
  if (steps > 0) detail::run(op, {}, {t}, LinspaceAttrs{start, end, steps});
  return t;
}

// Zeros, then ones along the diagonal through a strided view: no kernel of its own.
Tensor eye(int64_t n, int64_t m, DType dtype, Device device) {
  if (m == -1) m = n;
  HEARTH_CHECK(n >= 0 && m >= 0, ValueError, "[eye] n and m must be non-negative, got n=", n, " m=", m);
  Tensor t = zeros({n, m}, dtype, device);
  int64_t k = std::min(n, m);
  if (k > 0) fill_(t.as_strided_view({k}, {m + 1}, 0), 1);
  return t;
}

}  // namespace hearth
