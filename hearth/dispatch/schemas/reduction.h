// Reductions as backends see them. The functional layer moves the reduced dims
// last and makes the input contiguous, so every reduction kernel reduces rows:
//   input [outer, inner] (contiguous), output [outer] (contiguous).
//   sum, mean, amax, amin, prod        inputs {x} outputs {out}         (out dtype = x dtype; sum of ints: int64)
//   max_dim, min_dim                   inputs {x} outputs {values, int64 indices}
//   var                                inputs {x} outputs {out}         VarAttrs
#pragma once

#include <cstdint>

namespace hearth {

struct VarAttrs {
  int64_t correction = 1;
};

}  // namespace hearth
