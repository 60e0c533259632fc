// Dropout, residual add and layer norm in one op, as backends see it:
// y = layer_norm(dropout(x) + residual), BERT's BertSelfOutput/BertOutput tail.
// The functional layer (hearth/ops) reshapes and makes inputs contiguous, so every
// kernel below works on dense row-major buffers of the shapes given here. An
// undefined tensor marks an absent optional input, or an output not wanted.
//
// Dtypes: X is x's floating dtype, T the residual's, which is X or, for half X,
// float32 (mixed precision: a bfloat16 product beside a float32 residual
// stream); T is the dtype of the sum and of the output. A is the accumulation
// dtype of T (float32 for the half types, T otherwise); statistics are in A.
// P, the dtype of the weight and bias, is T or A.
//
//   dropout_add_layer_norm  inputs {x [M, K] (X), residual [M, K] (T), weight [K]?, bias [K]?}
//                           outputs {y [M, K] (T), mean [M] (A), rstd [M] (A), sum [M, K] (T)?}
//                           DropoutAddLayerNormAttrs. Element i = m * K + k, as the
//                           composition dropout -> add -> layer_norm rounds it:
//                             p > 0:  keep_i as dropout decides it for element i of x with the
//                                     same seed and offset (lane i%4 of philox(offset + i/4),
//                                     kept when (bits >> 8) * 2^-24 >= p);
//                                     d_i = keep_i ? round_X(x_i * s) : 0, s = 1 / (1 - p) in X's
//                                     compute type (dropout's scale); p < 1
//                             p == 0: d_i = x_i, nothing drawn
//                             sum_i = round_T(d_i + residual_i), added in T's compute type
//                           y, mean and rstd are layer_norm's of sum (its contract,
//                           hearth/dispatch/schemas/layer_norm.h); sum, written when wanted,
//                           is what the backward reads.
//   dropout_add_layer_norm_backward
//                           inputs {grad_y [M, K] (T), sum [M, K] (T), mean [M], rstd [M], weight [K]?}
//                           outputs {grad_x [M, K] (X)?, grad_residual [M, K] (T)?,
//                                    grad_weight [K]?, grad_bias [K]?}           DropoutAddLayerNormAttrs
//                           g = round_T(layer_norm_backward's grad_x of grad_y at sum);
//                           grad_residual = g; grad_x = keep_i ? round_X(round_X(g) * s) : 0
//                           (p == 0: round_X(g)), keep_i drawn again from the attrs' seed
//                           and offset; grad_weight and grad_bias as layer_norm_backward's.
#pragma once

#include <cstdint>

namespace hearth {

struct DropoutAddLayerNormAttrs {
  double eps = 1e-5;
  double p = 0.0;  // dropout probability in [0, 1); 0: no dropout, nothing drawn
  uint64_t seed = 0;
  uint64_t offset = 0;
};

}  // namespace hearth
