// Layer normalisation as backends see it.
// The functional layer (hearth/ops) reshapes and makes inputs contiguous, so every
// kernel below works on dense row-major buffers of the shapes given here. An
// undefined tensor marks an absent optional input, or an output not wanted.
//
// Dtypes: T is the input's floating dtype. A is the accumulation dtype: float32
// when T is bfloat16/float16, T otherwise; statistics (mean, rstd, lse) are in A.
// P, the dtype of the weight and bias, is T or A.
//
//   layer_norm            inputs {x [M, K], weight [K]?, bias [K]?}
//                         outputs {y [M, K], mean [M] (A), rstd [M] (A)}                LayerNormAttrs
//   layer_norm_backward   inputs {grad_y [M, K], x [M, K], mean [M], rstd [M], weight [K]?}
//                         outputs {grad_x [M, K]?, grad_weight [K]?, grad_bias [K]?}
#pragma once

namespace hearth {

struct LayerNormAttrs {
  double eps = 1e-5;
};

}  // namespace hearth
