// pow as backends see it. Inputs may be strided views and broadcast to the
// output's shape, with stride 0 on broadcast dims:
//   pow   inputs {a, b} outputs {out}; same dtype, never bool. On integers,
//         exponents < 0 give 1 for base 1, +-1 for base -1, 0 otherwise.
// No attributes.
#pragma once
