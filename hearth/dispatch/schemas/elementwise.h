// Attributes of the elementwise ops, shared by the functional layer and every
// backend's kernels. Op names and their operands:
//   fill_        outputs {t}                    FillAttrs
//   copy_        inputs {src} outputs {dst}     (same shape; dst dtype may differ)
//   add, sub     inputs {a, b} outputs {out}    AlphaAttrs (out = a + alpha*b); a, b, out share out's dtype
//   mul, div, maximum, minimum, pow             inputs {a, b} outputs {out}; same dtype
//   eq ne lt le gt ge                           inputs {a, b} (same dtype) outputs {bool out}
//   logical_and/or/xor                          inputs {a, b} outputs {bool out}
//   unary ops (neg, abs, exp, ...)              inputs {a} outputs {out}
#pragma once

#include "hearth/core/scalar.h"

namespace hearth {

struct FillAttrs {
  Scalar value;
};

struct AlphaAttrs {
  Scalar alpha;
};

}  // namespace hearth
