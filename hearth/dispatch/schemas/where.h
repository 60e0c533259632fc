// where as backends see it. Inputs may be strided views and broadcast to the
// output's shape, with stride 0 on broadcast dims:
//   where   inputs {a, b, cond} outputs {out}: out = cond ? a : b; a, b share out's dtype,
//           cond is bool; out may be b itself (masked_fill_)
// No attributes.
#pragma once
