// sum as backends see it.
// Row reductions: the functional layer moves the dims it reduces into a fixed
// place and makes the input contiguous, so the kernel sees dense rows:
// input x [outer, inner] (contiguous), outputs [outer] (contiguous).
//   sum                 inputs {x} outputs {out}               out dtype = x dtype (integer sums arrive as int64)
//   inner may be 0.
// No attributes.
#pragma once
