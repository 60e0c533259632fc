// amax, amin, max_dim and min_dim as backends see them.
// Row reductions: the functional layer moves the dims it reduces into a fixed
// place and makes the input contiguous, so the kernel sees dense rows:
// input x [outer, inner] (contiguous), outputs [outer] (contiguous).
//   amax, amin          inputs {x} outputs {out}               any dtype; NaN propagates
//   max_dim, min_dim    inputs {x} outputs {values, indices}   indices int64: first occurrence on ties, first NaN wins
//   inner >= 1 (the ops layer refuses empty rows).
// No attributes.
#pragma once
