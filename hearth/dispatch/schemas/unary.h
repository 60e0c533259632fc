// The unary elementwise ops as backends see them. Inputs may be strided views
// (outputs are allocated by the ops layer):
//   neg abs sign square     inputs {a} outputs {out}; same dtype, all but bool
//   exp log sqrt rsqrt      inputs {a} outputs {out}; same dtype, floating only (the
//                           ops layer casts integers to float32 first)
//   logical_not isnan isfinite  inputs {a} (any dtype) outputs {bool out}; x != 0 is true
// No attributes.
#pragma once
