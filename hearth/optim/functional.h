// One optimizer update of one parameter tensor, in place (torch.optim's
// _single_tensor_sgd/_single_tensor_adam bodies). Each is a single dispatched
// op ("sgd_step", "adam_step"; math in hearth/dispatch/schemas/optim.h), so a
// backend replaces the whole update with one fused kernel. The optimizers
// (sgd.h, adam.h) call the foreach forms below once per step; all are public
// for code that manages its own state.
//
// param may be any floating tensor, grad and the state tensors must match its
// shape, dtype and device. Tensors that are not contiguous are updated through
// dense copies written back afterwards. A parameter with a low-precision copy
// for autocast (hearth/ops/param_half_copies.h) gets it written in the same
// call. Run them under NoGradGuard (the
// optimizers do): parameters are leaves that require grad.
#pragma once

#include <vector>

#include "hearth/core/tensor.h"
#include "hearth/dispatch/schemas/optim.h"

namespace hearth::optim {

// momentum_buffer: required when attrs.momentum != 0, else undefined.
void sgd_step_(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdStepAttrs& attrs);
// max_exp_avg_sq: required when attrs.amsgrad, else undefined. attrs.step
// counts this update (1 on the first).
void adam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                const Tensor& max_exp_avg_sq, const AdamStepAttrs& attrs);

// The same updates over many parameters at once ("sgd_step_foreach",
// "adam_step_foreach"): one dispatched call per device and dtype present, so a
// backend updates every parameter in a few kernels; where a backend has no
// foreach kernel, dispatch composes the call of the single-tensor op per
// parameter, on the device. The lists are
// parallel; the optional lists may be empty when momentum is 0 / amsgrad is off.
void sgd_step_foreach_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                       const std::vector<Tensor>& momentum_buffers, const SgdStepAttrs& attrs);
void adam_step_foreach_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                        const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                        const std::vector<Tensor>& max_exp_avg_sqs, const AdamStepAttrs& attrs);

// Clips `grads` (at least one; one dtype, one device) by their global p-norm
// in one dispatched call ("clip_grad_norm_foreach"), returning that norm
// before clipping as a 0-d tensor on their device (where the backend has no
// kernel, dispatch runs the op's composition of primitives); false in *done
// (and nothing touched) where the call is refused before running, so the
// caller composes the clipping from other ops. Gradients that are not dense are
// clipped through dense copies written back.
Tensor clip_grad_norm_foreach_(const std::vector<Tensor>& grads, const ClipGradNormAttrs& attrs, bool* done);

}  // namespace hearth::optim
