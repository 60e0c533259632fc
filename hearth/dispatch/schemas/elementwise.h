// Attributes of the elementwise ops, shared by the functional layer and every
// backend's kernels. Op names and their operands (inputs may be strided views
// and broadcast to the output's shape, with stride 0 on broadcast dims, unless
// a line says otherwise; outputs are allocated by the ops layer):
//   fill_        outputs {t}                    FillAttrs
//   copy_        inputs {src} outputs {dst}     (same shape; dst dtype may differ)
//   add, sub     inputs {a, b} outputs {out}    AlphaAttrs (out = a + alpha*b); a, b, out share out's dtype
//   mul, div, maximum, minimum, pow             inputs {a, b} outputs {out}; same dtype
//       maximum/minimum propagate NaN. pow on integers: exponents < 0 give
//       1 for base 1, +-1 for base -1, 0 otherwise; never bool.
//   eq ne lt le gt ge                           inputs {a, b} (same dtype) outputs {bool out}
//   logical_and/or/xor                          inputs {a, b} (same dtype) outputs {bool out}; x != 0 is true
//   unary ops                                   inputs {a} outputs {out}
//       same dtype: neg abs sign square relu (all but bool),
//                   exp log sqrt rsqrt tanh sigmoid silu (floating only; the
//                   ops layer casts integers to float32 first), gelu (GeluAttrs)
//       bool out:   logical_not isnan isfinite (any input dtype)
//   gelu_backward  inputs {grad, x} outputs {grad_x}   GeluAttrs; all one floating dtype, same shape
//   relu_backward  inputs {grad, y} outputs {grad_x}: grad_x = y > 0 ? grad : 0, where y = relu(x);
//                  one floating dtype, same shape (one pass instead of a compare and a select)
//   clamp        inputs {a} outputs {out}       ClampAttrs; same dtype; out may be a itself (clamp_)
//   where        inputs {a, b, cond} outputs {out}: out = cond ? a : b; a, b share out's dtype,
//                cond is bool; out may be b itself (masked_fill_)
//   arange_      outputs {t}                    RangeAttrs: t[i] = start + i * step (1-D, contiguous)
//   linspace_    outputs {t}                    LinspaceAttrs (1-D, contiguous), see below
#pragma once

#include <cstdint>

#include "hearth/core/scalar.h"

namespace hearth {

struct FillAttrs {
  Scalar value;
};

struct AlphaAttrs {
  Scalar alpha;
};

struct GeluAttrs {
  bool tanh_approximation = false;  // false: x * Phi(x) with erf
};

// A bound that is absent is not applied.
struct ClampAttrs {
  Scalar min;
  Scalar max;
  bool has_min = false;
  bool has_max = false;
};

// Integer dtypes compute in int64 when start and step are integers, so large
// ranges stay exact; everything else computes in double, then converts.
struct RangeAttrs {
  Scalar start;
  Scalar step;
};

// steps values from start to end inclusive, computed in double as
// start + i * step for i < steps / 2 and end - (steps - 1 - i) * step after,
// with step = (end - start) / (steps - 1): both ends are exact.
struct LinspaceAttrs {
  double start = 0;
  double end = 0;
  int64_t steps = 0;
};

}  // namespace hearth
