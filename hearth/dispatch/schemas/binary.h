// The arithmetic of two tensors as backends see it. Inputs may be strided views
// and broadcast to the output's shape, with stride 0 on broadcast dims; outputs
// are allocated by the ops layer:
//   add, sub     inputs {a, b} outputs {out}    AlphaAttrs (out = a + alpha*b); a, b, out share out's dtype,
//                except that add takes a bfloat16 or float16 b beside a float32 a and out, widened as it
//                is read (exactly: the result is add(a, cast(b, float32)) without the cast's pass;
//                a float32 sum of gradients taking a half one, as autocast's casts hand them back)
//   mul, div     inputs {a, b} outputs {out}; same dtype
#pragma once

#include "hearth/core/scalar.h"

namespace hearth {

struct AlphaAttrs {
  Scalar alpha;
};

}  // namespace hearth
