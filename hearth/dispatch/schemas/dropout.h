// Dropout as backends see it.
// The functional layer (hearth/ops) reshapes and makes inputs contiguous, so every
// kernel below works on dense row-major buffers of the shapes given here. An
// undefined tensor marks an absent optional input, or an output not wanted.
//
//   dropout               inputs {x [n]} outputs {y [n], mask [n] bool}                  DropoutAttrs
//                         element i draws u_i with the uniform float32 mapping of
//                         hearth/dispatch/schemas/random.h (lane i%4 of philox(offset + i/4),
//                         u = (bits >> 8) * 2^-24) for every dtype; keeps when u_i >= p:
//                         y = x / (1 - p), mask = 1; else y = 0, mask = 0. 0 < p < 1.
//   dropout_backward      inputs {grad_y [n], mask [n] bool} outputs {grad_x [n]}       DropoutAttrs
//                         grad_x = mask ? grad_y / (1 - p) : 0
#pragma once

#include <cstdint>

namespace hearth {

struct DropoutAttrs {
  uint64_t seed = 0;
  uint64_t offset = 0;
  double p = 0.5;
};

// Philox counters dropout of n elements reserves (four elements per counter).
inline uint64_t dropout_counters(int64_t n) { return static_cast<uint64_t>((n + 3) / 4); }

}  // namespace hearth
