// The arithmetic of two tensors as backends see it. Inputs may be strided views
// and broadcast to the output's shape, with stride 0 on broadcast dims; outputs
// are allocated by the ops layer:
//   add, sub     inputs {a, b} outputs {out}    AlphaAttrs (out = a + alpha*b); a, b, out share out's dtype
//   mul, div     inputs {a, b} outputs {out}; same dtype
#pragma once

#include "hearth/core/scalar.h"

namespace hearth {

struct AlphaAttrs {
  Scalar alpha;
};

}  // namespace hearth
