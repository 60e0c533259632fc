// Optimizer steps as backends see them: one op call updates one parameter
// tensor and its state in place, so a backend can replace the whole update
// with one fused kernel (and later a multi-tensor one). The functional layer
// (hearth/ops/optim.cpp) checks everything and passes dense tensors:
// param, grad and every state tensor are contiguous, of the same shape and
// dtype T (floating), on one device. Arithmetic is in compute_t<T>; the
// scalar coefficients are computed in double and rounded once.
//
//   sgd_step   inputs {param, grad, momentum_buffer?}   outputs {copy?}  SgdStepAttrs
//              mutates inputs 0 and 2. With g = maximize ? -grad : grad:
//                d = g + weight_decay * param
//                if momentum != 0:
//                  buf = init_buffer ? d : momentum * buf + (1 - dampening) * d
//                  d = nesterov ? d + momentum * buf : buf
//                param -= lr * d
//              (torch.optim.SGD). momentum_buffer is present iff momentum != 0.
//
//   adam_step  inputs {param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq?}  outputs {copy?}  AdamStepAttrs
//              mutates inputs 0, 2, 3 and 4. With g = maximize ? -grad : grad and
//              `step` already counting this update (1 on the first):
//                if decoupled_weight_decay: param *= 1 - lr * weight_decay      (AdamW)
//                else:                      g += weight_decay * param           (Adam, L2)
//                exp_avg    = beta1 * exp_avg    + (1 - beta1) * g
//                exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g
//                v = amsgrad ? (max_exp_avg_sq = max(max_exp_avg_sq, exp_avg_sq)) : exp_avg_sq
//                denom = sqrt(v) / sqrt(1 - beta2^step) + eps
//                param -= lr / (1 - beta1^step) * exp_avg / denom
//              (torch.optim.Adam/AdamW, the non-capturable path). max_exp_avg_sq
//              is present iff amsgrad.
//
//   sgd_step_foreach   inputs {param, grad, momentum_buffer?} x n      SgdStepAttrs
//   adam_step_foreach  inputs {param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq?} x n   AdamStepAttrs
//              the same update over n parameters in one call (torch's _foreach/
//              multi-tensor path): groups of 3 (SGD) or 5 (Adam) inputs, the
//              optional tensor of each group undefined where the single op
//              leaves it out; one attrs for all (the same step and init_buffer).
//              Every tensor of every group is contiguous, of one dtype and on
//              one device; sizes differ between groups. The optimizers use these
//              where the backend has them, so a backend launches a few kernels
//              per step instead of one per parameter.
//
//   clip_grad_norm_foreach  inputs {grad} x n  outputs {total}  ClipGradNormAttrs
//              mutates every input (torch.nn.utils.clip_grad_norm_'s foreach
//              path). In the accumulation dtype A (float64 for float64
//              gradients, else float32), with p = norm_type (infinity: the
//              largest magnitude):
//                norm_i = ||grad_i||_p
//                total  = ||(norm_0, ..., norm_{n-1})||_p    (a 0-d A, the output)
//                coef   = min(1, max_norm / (total + 1e-6))
//                grad_i = grad_i * (coef rounded to the gradients' dtype)
//              Every gradient is dense (contiguous, or dense in another flat
//              layout: the order of elements does not matter), of one dtype,
//              on one device, n >= 1. The coefficient never comes to the host.
//
//   copy (every op): the parameter's low-precision copy (autocast's cast of
//              it, hearth/ops/param_half_copies.h), written with the new
//              parameter: copy = cast(param, copy.dtype) after the update,
//              rounded to nearest even from the stored float32 value, as
//              cast() rounds. Outputs are either none, or one per group in
//              input order (the foreach ops), undefined where a parameter has
//              no copy. A copy is present only for a float32 param, in
//              bfloat16 or float16, dense in the param's layout (its element
//              k in memory is the param's element k).
#pragma once

#include <cstdint>

namespace hearth {

struct SgdStepAttrs {
  double lr = 1e-3;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  bool maximize = false;
  bool init_buffer = false;  // the buffer's first step: it takes d as is
};

struct ClipGradNormAttrs {
  double max_norm = 1.0;
  double norm_type = 2.0;  // > 0; infinity for the largest magnitude
};

struct AdamStepAttrs {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  int64_t step = 1;
  bool amsgrad = false;
  bool maximize = false;
  bool decoupled_weight_decay = false;
};

}  // namespace hearth
