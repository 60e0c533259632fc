// var (and std) as backends see it.
// Row reductions: the functional layer moves the dims it reduces into a fixed
// place and makes the input contiguous, so the kernel sees dense rows:
// input x [outer, inner] (contiguous), outputs [outer] (contiguous).
//   var                 inputs {x} outputs {out}   VarAttrs    floating; two-pass in double; sqrt when take_sqrt (std)
//   inner may be 0.
#pragma once

#include <cstdint>

namespace hearth {

struct VarAttrs {
  int64_t correction = 1;  // divide by max(0, n - correction)
  bool take_sqrt = false;  // std instead of var
};

}  // namespace hearth
