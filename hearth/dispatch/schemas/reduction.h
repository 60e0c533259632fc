// Reductions, scans and sorts as backends see them. The functional layer moves
// the dims it works on into a fixed place and makes the input contiguous, so
// every kernel here sees dense rows:
//
// Row reductions: input x [outer, inner] (contiguous), outputs [outer] (contiguous).
//   sum                 inputs {x} outputs {out}               out dtype = x dtype (integer sums arrive as int64)
//   amax, amin          inputs {x} outputs {out}               any dtype; NaN propagates
//   max_dim, min_dim    inputs {x} outputs {values, indices}   indices int64: first occurrence on ties, first NaN wins
//   var                 inputs {x} outputs {out}   VarAttrs    floating; two-pass in double; sqrt when take_sqrt (std)
//   norm                inputs {x} outputs {out}   NormAttrs   floating; p = 0 counts nonzeros, +-inf is max/min |x|
//   inner may be 0 for sum, var and finite non-zero p norm (the ops layer refuses it for the others).
//
// Scans: x [outer, n, inner] contiguous, scanned along the middle dim.
//   cumsum              inputs {x} outputs {out [outer, n, inner]}  ScanAttrs   floating or int64 (others arrive as int64)
//
// Sorting along rows: x [outer, n] contiguous. NaN orders above every number.
//   sort                inputs {x} outputs {values [outer, n], int64 indices [outer, n]}   SortAttrs (stable)
//   topk                inputs {x} outputs {values [outer, k], int64 indices [outer, k]}   TopkAttrs
//                       (sorted, best first; among equal values the lower index first)
//   CUDA leaves sort and topk to the CPU fallback on purpose: no model hearth
//   trains needs them on the device.
#pragma once

#include <cstdint>

namespace hearth {

struct VarAttrs {
  int64_t correction = 1;  // divide by max(0, n - correction)
  bool take_sqrt = false;  // std instead of var
};

struct NormAttrs {
  double p = 2.0;
};

struct ScanAttrs {
  bool reverse = false;  // out[j] = sum of x[j..n) instead of x[0..j]
};

struct SortAttrs {
  bool descending = false;
};

struct TopkAttrs {
  int64_t k = 1;
  bool largest = true;
};

}  // namespace hearth
