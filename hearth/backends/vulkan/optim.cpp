// sgd_step and adam_step on Vulkan (shaders/optim_step.comp), float32, one
// dispatch per parameter; the foreach forms are the ops layer's composition
// of these, one per group. The coefficients are computed in double on the host and rounded
// once, as the CPU kernels do. A parameter's half-precision copy (an output)
// is not supported: the Vulkan kernels have no 16-bit types yet.
#include "hearth/dispatch/schemas/optim.h"

#include <cmath>

#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

void check_no_copy(const OpCall& call, const char* op) {
  for (const Tensor& c : call.outputs)
    HEARTH_CHECK(!c.defined(), NotImplementedError, "[", op,
                 "] the Vulkan kernel cannot write a parameter's half-precision copy");
}

void sgd_one(const Tensor& param, const Tensor& grad, const Tensor& buf, const SgdStepAttrs& a) {
  const int64_t n = param.numel();
  if (n == 0) return;
  Dispatch d("optim_step", param.device().index);
  d.tensors = {param, grad, buf, Tensor(), Tensor()};
  d.spec = {0};
  const bool use_buf = a.momentum != 0.0;
  d.params.u32(static_cast<uint32_t>(n))
      .u32((use_buf ? 1u : 0u) | (a.init_buffer ? 2u : 0u) | (a.nesterov ? 4u : 0u))
      .f32(a.maximize ? -1.0f : 1.0f);
  d.params.f32(static_cast<float>(a.lr))
      .f32(static_cast<float>(a.weight_decay))
      .f32(static_cast<float>(a.momentum))
      .f32(static_cast<float>(1.0 - a.dampening));
  for (int i = 4; i < 9; ++i) d.params.f32(0.0f);
  d.groups_x = d.groups_for(n);
  d.run();
}

void adam_one(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v, const Tensor& vmax,
              const AdamStepAttrs& a) {
  const int64_t n = param.numel();
  if (n == 0) return;
  const double step = static_cast<double>(a.step);
  const double bias_correction1 = 1.0 - std::pow(a.beta1, step);
  const double bias_correction2 = 1.0 - std::pow(a.beta2, step);
  Dispatch d("optim_step", param.device().index);
  d.tensors = {param, grad, m, v, vmax};
  d.spec = {1};
  d.params.u32(static_cast<uint32_t>(n)).u32(a.amsgrad ? 1u : 0u).f32(a.maximize ? -1.0f : 1.0f);
  d.params.f32(static_cast<float>(a.beta1))
      .f32(static_cast<float>(a.beta2))
      .f32(static_cast<float>(1.0 - a.beta1))
      .f32(static_cast<float>(1.0 - a.beta2))
      .f32(static_cast<float>(a.eps))
      .f32(static_cast<float>(a.lr / bias_correction1))
      .f32(static_cast<float>(std::sqrt(bias_correction2)))
      .f32(a.decoupled_weight_decay ? 0.0f : static_cast<float>(a.weight_decay))
      .f32(static_cast<float>(a.decoupled_weight_decay ? 1.0 - a.lr * a.weight_decay : 1.0));
  d.groups_x = d.groups_for(n);
  d.run();
}

Tensor optional_input(const OpCall& call, size_t i) { return i < call.inputs.size() ? call.in(i) : Tensor(); }

void sgd_step_kernel(OpCall& call) {
  check_no_copy(call, "sgd_step");
  sgd_one(call.in(0), call.in(1), optional_input(call, 2), call.attrs<SgdStepAttrs>());
}

void adam_step_kernel(OpCall& call) {
  check_no_copy(call, "adam_step");
  adam_one(call.in(0), call.in(1), call.in(2), call.in(3), optional_input(call, 4), call.attrs<AdamStepAttrs>());
}

const DTypeSet kFloat = {DType::float32};

HEARTH_REGISTER_KERNEL(sgd_step, vulkan_kind(), sgd_step_kernel, kFloat);
HEARTH_REGISTER_KERNEL(adam_step, vulkan_kind(), adam_step_kernel, kFloat);

}  // namespace
}  // namespace hearth::vulkan
