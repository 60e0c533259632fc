// The losses as backends see them.
// The functional layer (hearth/ops) reshapes and makes inputs contiguous, so every
// kernel below works on dense row-major buffers of the shapes given here. An
// undefined tensor marks an absent optional input, or an output not wanted.
//
// Dtypes: T is the input's floating dtype. A is the accumulation dtype: float32
// when T is bfloat16/float16, T otherwise; statistics (mean, rstd, lse) are in A.
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
#pragma once

#include <cstdint>

namespace hearth {

struct CrossEntropyAttrs {
  int64_t ignore_index = -100;
  double label_smoothing = 0.0;
};

struct NllLossAttrs {
  int64_t ignore_index = -100;
};

}  // namespace hearth
