// Normalisation, softmax, losses, embedding and dropout as backends see them.
// The functional layer (hearth/ops) reshapes and makes inputs contiguous, so every
// kernel below works on dense row-major buffers of the shapes given here. An
// undefined tensor marks an absent optional input, or an output not wanted.
//
// Dtypes: T is the input's floating dtype. A is the accumulation dtype: float32
// when T is bfloat16/float16, T otherwise; statistics (mean, rstd, lse) are in A.
// P, the dtype of normalisation parameters and running statistics, is T or A.
//
//   batch_norm            inputs {x [N, C, S], running_mean [C]?, running_var [C]?, weight [C]?, bias [C]?,
//                                 residual [N, C, S]?}
//                         outputs {y [N, C, S], mean [C] (A), invstd [C] (A)}          BatchNormAttrs
//     training: mean/invstd are the batch's (biased variance); running stats, when
//     given, are updated in place: r = (1 - momentum) * r + momentum * batch, with
//     the unbiased variance (N*S > 1 is guaranteed). Inputs 1 and 2 are mutated.
//     eval: mean = running_mean, invstd = 1 / sqrt(running_var + eps).
//   batch_norm_backward   inputs {grad_y [N, C, S], x [N, C, S], mean [C], invstd [C], weight [C]?, y [N, C, S]?}
//                         outputs {grad_x [N, C, S]?, grad_weight [C]?, grad_bias [C]?,
//                                  grad_residual [N, C, S]?}                            BatchNormAttrs
//     (training selects whether the batch statistics depend on x.)
//     relu: the forward writes max(y, 0); the backward takes the saved output as
//     input 5 and first zeroes grad_y where that output is not positive (as
//     relu_backward does), so relu(batch_norm(x)) costs the two kernels alone.
//     residual (input 5 of the forward, only with relu): a tensor of x's shape,
//     dtype and memory (the ops layer converts it), added to the normalised
//     value before the ReLU, rounded as add(batch_norm(x), residual) rounds:
//     y = max(T(T(batch_norm(x)) + residual), 0), ResNet's block tail. Its
//     gradient is the masked grad_y itself; the backward writes it to output 3
//     when that is defined, from a pass it already makes over grad_y, so
//     relu(batch_norm(x) + residual) also costs the two kernels alone.
//     A channels_last (NHWC) image reaches both kernels as [N*H*W, C, 1]: its
//     memory already is that row-major matrix, so kernels see only dense NCS.
//
//   layer_norm            inputs {x [M, K], weight [K]?, bias [K]?}
//                         outputs {y [M, K], mean [M] (A), rstd [M] (A)}                LayerNormAttrs
//   layer_norm_backward   inputs {grad_y [M, K], x [M, K], mean [M], rstd [M], weight [K]?}
//                         outputs {grad_x [M, K]?, grad_weight [K]?, grad_bias [K]?}
//
//   softmax, log_softmax  inputs {x [outer, D, inner]} outputs {y [outer, D, inner]}: along D.
//   softmax_backward      inputs {grad_y, y} outputs {grad_x}: grad_x = y * (grad_y - sum_D(grad_y * y))
//   log_softmax_backward  inputs {grad_y, y} outputs {grad_x}: grad_x = grad_y - exp(y) * sum_D(grad_y)
//
//   cross_entropy         inputs {logits [M, C], target [M] int64, weight [C]?}
//                         outputs {loss [M] (A), lse [M] (A), target_weight [M] (A)}  CrossEntropyAttrs
//     with logp = logits - lse and w = weight (ones when absent), for a row with
//     target t != ignore_index:
//       loss = (1 - ls) * w[t] * -logp[t] + (ls / C) * sum_c w[c] * -logp[c],  target_weight = w[t]
//     and loss = target_weight = 0 for ignored rows (ls = label_smoothing). The
//     mean reduction is sum(loss) / sum(target_weight), as PyTorch's.
//   cross_entropy_backward inputs {logits [M, C], target [M], lse [M], grad_loss [M] (A), weight [C]?}
//                         outputs {grad_logits [M, C]}                                  CrossEntropyAttrs
//       grad = grad_loss * (((1 - ls) * w[t] + ls * sum(w) / C) * softmax - (1 - ls) * w[t] * onehot(t) - ls / C * w)
//     and zero for ignored rows.
//   nll_loss              inputs {log_probs [M, C], target [M] int64, weight [C]?}
//                         outputs {loss [M] (A), target_weight [M] (A)}: loss = -w[t] * log_probs[t]  NllLossAttrs
//   nll_loss_backward     inputs {grad_loss [M] (A), target [M] int64, weight [C]?}
//                         outputs {grad_input [M, C] (T)}: -grad_loss * w[t] at t, zero elsewhere  NllLossAttrs
//     Targets outside [0, C) other than ignore_index raise ValueError naming the
//     value and C (the CPU kernels throw; data-dependent, so the ops layer cannot).
//     Device kernels cannot raise without synchronising the host: they write NaN
//     loss and target_weight for such a row, and a zero gradient row.
//
//   embedding             inputs {weight [V, D], indices [K] int64|int32} outputs {out [K, D]}
//                         (dispatch key: weight's dtype, any). Indices outside [0, V)
//                         raise ValueError naming the index and V (device kernels
//                         write NaN rows, zero for integer tables, and drop their
//                         gradient instead).
//   embedding_backward    inputs {grad_out [K, D], indices [K]} outputs {grad_weight [V, D]}  EmbeddingAttrs
//                         grad_weight[v] = sum of grad_out rows whose index is v; the
//                         padding_idx row stays zero. The kernel writes every element.
//
//   dropout               inputs {x [n]} outputs {y [n], mask [n] bool}                  DropoutAttrs
//                         element i draws u_i with the uniform float32 mapping of
//                         hearth/dispatch/schemas/random.h (lane i%4 of philox(offset + i/4),
//                         u = (bits >> 8) * 2^-24) for every dtype; keeps when u_i >= p:
//                         y = x / (1 - p), mask = 1; else y = 0, mask = 0. 0 < p < 1.
//   dropout_backward      inputs {grad_y [n], mask [n] bool} outputs {grad_x [n]}       DropoutAttrs
//                         grad_x = mask ? grad_y / (1 - p) : 0
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

struct BatchNormAttrs {
  bool training = true;
  double momentum = 0.1;
  double eps = 1e-5;
  bool relu = false;  // y = max(batch_norm(x), 0): the ReLU that follows most batch norms, fused
};

struct LayerNormAttrs {
  double eps = 1e-5;
};

struct CrossEntropyAttrs {
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
};

struct NllLossAttrs {
  int64_t ignore_index = -100;
};

struct EmbeddingAttrs {
  int64_t padding_idx = -1;  // -1: none
};

struct DropoutAttrs {
  uint64_t seed = 0;
  uint64_t offset = 0;
  double p = 0.5;
};

// Philox counters dropout of n elements reserves (four elements per counter).
inline uint64_t dropout_counters(int64_t n) { return static_cast<uint64_t>((n + 3) / 4); }

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
