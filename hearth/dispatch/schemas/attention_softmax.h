// Attention's fused softmax as backends see it.
// The functional layer (hearth/ops) reshapes and makes inputs contiguous, so every
// kernel below works on dense row-major buffers of the shapes given here. An
// undefined tensor marks an absent optional input, or an output not wanted.
//
// Dtypes: T is the input's floating dtype. A is the accumulation dtype: float32
// when T is bfloat16/float16, T otherwise; statistics (mean, rstd, lse) are in A.
//
//   attention_softmax     inputs {scores [R, S], mask?} outputs {probs [R, S], y [R, S]?, keep [R*S] bool?}
//                         AttentionSoftmaxAttrs. The mask (dense, T or A) holds the values
//                         the rows add. Attention's scale, additive mask, softmax and
//                         dropout in one pass: for row r and column c, in A,
//                           y[r, c] = softmax_c(scores[r, c] * scale + mask[mask_offset(r) + c * mask_col_stride])
//                         (mask_offset in the attrs; no mask term when the mask is absent; the
//                         max is subtracted first, and not when infinite, as softmax does).
//                         p > 0: y is written (rounded to T) and element i = r * S + c is
//                         dropped from it exactly as dropout drops element i with the same
//                         seed and offset: keep[i] = u_i >= p, probs = keep ? y / (1 - p) : 0,
//                         the quotient taken from y's T value.
//                         p == 0: probs = y; the outputs y and keep are undefined (not written).
//   attention_softmax_backward inputs {grad_probs [R, S], y [R, S], keep [R*S] bool?}
//                         outputs {grad_scores [R, S]}                                 AttentionSoftmaxAttrs
//                         in A: g = keep ? grad_probs / (1 - p) : 0 (g = grad_probs when keep is
//                         absent, p == 0), grad_scores = scale * (y * (g - sum_S(g * y))).
#pragma once

#include <cstdint>

namespace hearth {

// The additive mask of attention_softmax, broadcast over rows: row r of
// [R, S], written as (i0, i1, i2) over row_sizes (outermost first, product R),
// reads the mask from element i0 * row_strides[0] + i1 * row_strides[1] +
// i2 * row_strides[2] of the mask's dense buffer, its columns mask_col_stride
// (1, or 0 for a mask of one column) apart. Broadcast dims have stride 0.
struct AttentionSoftmaxAttrs {
  double scale = 1.0;
  double p = 0.0;  // dropout probability, in [0, 1); 0: no dropout
  uint64_t seed = 0;
  uint64_t offset = 0;
  int64_t row_sizes[3] = {1, 1, 1};
  int64_t row_strides[3] = {0, 0, 0};
  int64_t mask_col_stride = 1;

  int64_t mask_offset(int64_t r) const {
    const int64_t i2 = r % row_sizes[2], rest = r / row_sizes[2];
    return (rest / row_sizes[1]) * row_strides[0] + (rest % row_sizes[1]) * row_strides[1] + i2 * row_strides[2];
  }
};

}  // namespace hearth
