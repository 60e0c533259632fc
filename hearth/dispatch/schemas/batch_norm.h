// Batch normalisation as backends see it, with its fused forms.
// The functional layer (hearth/ops) reshapes and makes inputs contiguous, so every
// kernel below works on dense row-major buffers of the shapes given here. An
// undefined tensor marks an absent optional input, or an output not wanted.
//
// Dtypes: T is the input's floating dtype. A is the accumulation dtype: float32
// when T is bfloat16/float16, T otherwise; statistics (mean, rstd, lse) are in A.
// P, the dtype of normalisation parameters and running statistics, is T or A.
//
//   batch_norm            inputs {x [N, C, S], running_mean [C]?, running_var [C]?, weight [C]?, bias [C]?,
//                                 residual [N, C, S]?, num_batches_tracked [] (int64)?}
//                         outputs {y [N, C, S], mean [C] (A), invstd [C] (A), affine [2, C] (A)?}
//                                                                                  BatchNormAttrs
//     affine, when wanted: the map the forward applied, y = x * affine[0][c] + affine[1][c].
//     training: mean/invstd are the batch's (biased variance); running stats, when
//     given, are updated in place: r = (1 - momentum) * r + momentum * batch, with
//     the unbiased variance (N*S > 1 is guaranteed). Inputs 1 and 2 are mutated.
//     num_batches_tracked (training only): a one-element int64 counter on x's
//     device, incremented by one in place (input 6 is mutated), so a module's
//     step count costs no kernels of its own (it was an add and a copy per
//     batch norm per step, 106 small kernels in a ResNet-50 step).
//     eval: mean = running_mean, invstd = 1 / sqrt(running_var + eps).
//   batch_norm_backward   inputs {grad_y [N, C, S], x [N, C, S], mean [C], invstd [C], weight [C]?, y [N, C, S]?,
//                                 affine [2, C] (A)?}
//                         outputs {grad_x [N, C, S]?, grad_weight [C]?, grad_bias [C]?,
//                                  grad_residual [N, C, S]?}                            BatchNormAttrs
//     (training selects whether the batch statistics depend on x.)
//     relu: the forward writes max(y, 0); the backward takes the saved output as
//     input 5 and first zeroes grad_y where that output is not positive (as
//     relu_backward does), so relu(batch_norm(x)) costs the two kernels alone.
//     Without a residual, the forward's affine output comes back as input 6,
//     and a kernel may recompute whether the output was positive from x and
//     that map (value x * scale + shift as one fused multiply-add, rounded to
//     T): the same mask with one read less per pass.
//     residual (input 5 of the forward, only with relu): a tensor of x's shape,
//     dtype and memory (the ops layer converts it), added to the normalised
//     value before the ReLU, rounded as add(batch_norm(x), residual) rounds:
//     y = max(T(T(batch_norm(x)) + residual), 0), ResNet's block tail. Its
//     gradient is the masked grad_y itself; the backward writes it to output 3
//     when that is defined, from a pass it already makes over grad_y, so
//     relu(batch_norm(x) + residual) also costs the two kernels alone.
//     A channels_last (NHWC) image reaches both kernels as [N*H*W, C, 1]: its
//     memory already is that row-major matrix, so kernels see only dense NCS.
//   batch_norm_relu       batch_norm with relu set (BatchNormAttrs::relu), the same operands.
//   batch_norm_add_relu   batch_norm with relu set and the residual (input 5) given.
#pragma once

namespace hearth {

struct BatchNormAttrs {
  bool training = true;
  double momentum = 0.1;
  double eps = 1e-5;
  bool relu = false;  // y = max(batch_norm(x), 0): the ReLU that follows most batch norms, fused
};

}  // namespace hearth
