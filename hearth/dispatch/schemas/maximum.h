// Elementwise maximum and minimum as backends see them. Inputs may be strided
// views and broadcast to the output's shape, with stride 0 on broadcast dims:
//   maximum, minimum   inputs {a, b} outputs {out}; same dtype. NaN propagates.
// No attributes.
#pragma once
