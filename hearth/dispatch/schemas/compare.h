// Comparisons and logical connectives as backends see them. Inputs may be
// strided views and broadcast to the output's shape, with stride 0 on broadcast dims:
//   eq ne lt le gt ge            inputs {a, b} (same dtype) outputs {bool out}
//   logical_and/or/xor           inputs {a, b} (same dtype) outputs {bool out}; x != 0 is true
// No attributes.
#pragma once
