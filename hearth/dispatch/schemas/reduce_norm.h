// norm as backends see it.
// Row reductions: the functional layer moves the dims it reduces into a fixed
// place and makes the input contiguous, so the kernel sees dense rows:
// input x [outer, inner] (contiguous), outputs [outer] (contiguous).
//   norm                inputs {x} outputs {out}   NormAttrs   floating; p = 0 counts nonzeros, +-inf is max/min |x|
//   inner may be 0 for a finite non-zero p (the ops layer refuses it for the others).
#pragma once

namespace hearth {

struct NormAttrs {
  double p = 2.0;
};

}  // namespace hearth
