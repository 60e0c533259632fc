// sgd_step and adam_step on Vulkan (shaders/optim_step.comp), float32, one
// dispatch per parameter; the foreach forms are the ops layer's composition
// of these, one per group. The coefficients are computed in double on the host and rounded
// once, as the CPU kernels do. A parameter's float16 or bfloat16 copy (the
// output that autocast's next forward reads instead of casting) is the
// updated parameter cast by the elementwise kernel: the same rounding of the
// same float32 value as the CPU's in-register store. 16-bit parameters and
// state run on widened float32 copies (half_widening.h), the shader rounding
// each stored value to their dtype where the CPU reads it back rounded.
#include "hearth/dispatch/schemas/optim.h"

#include <cmath>

#include "hearth/backends/vulkan/elementwise.h"
#include "hearth/backends/vulkan/half_widening.h"
#include "hearth/backends/vulkan/kernel_launch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::vulkan {
namespace {

void check_copy(const OpCall& call, const char* op) {
  for (const Tensor& c : call.outputs)
    HEARTH_CHECK(!c.defined() || c.dtype() == DType::float16 || c.dtype() == DType::bfloat16, NotImplementedError, "[",
                 op, "] the Vulkan kernel writes a parameter's float16 or bfloat16 copy, not a ", dtype_name(c.dtype()),
                 " one");
}

// The parameter's low-precision copy, when the call has one, from its new values.
void write_copy(const OpCall& call) {
  if (!call.outputs.empty() && call.out(0).defined()) run_elementwise(EW_COPY, call.out(0), {call.in(0)}, false);
}

// `stored`: the dtype the (widened) parameter and state are kept in.
void sgd_one(const Tensor& param, const Tensor& grad, const Tensor& buf, const SgdStepAttrs& a, DType stored) {
  const int64_t n = param.numel();
  if (n == 0) return;
  Dispatch d("optim_step", param.device().index);
  d.tensors = {param, grad, buf, Tensor(), Tensor()};
  d.spec = {0, static_cast<uint32_t>(stored)};
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
              const AdamStepAttrs& a, DType stored) {
  const int64_t n = param.numel();
  if (n == 0) return;
  const double step = static_cast<double>(a.step);
  const double bias_correction1 = 1.0 - std::pow(a.beta1, step);
  const double bias_correction2 = 1.0 - std::pow(a.beta2, step);
  Dispatch d("optim_step", param.device().index);
  d.tensors = {param, grad, m, v, vmax};
  d.spec = {1, static_cast<uint32_t>(stored)};
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

// A 16-bit parameter's update on float32 copies of it and its state, each
// rounded back; `inputs` are the call's, `mutated` those written.
template <typename Step>
void on_widened(const OpCall& call, const std::vector<size_t>& mutated, const char* op, Step&& step) {
  require_float16(call.inputs, op);
  std::vector<Tensor> wide;
  for (const Tensor& t : call.inputs) wide.push_back(t.defined() ? widen(t) : Tensor());
  step(wide);
  for (size_t i : mutated)
    if (i < wide.size() && wide[i].defined()) narrow_into(call.in(i), wide[i]);
}

void sgd_step_kernel(OpCall& call) {
  const DType dt = call.in(0).dtype();
  const SgdStepAttrs& a = call.attrs<SgdStepAttrs>();
  if (dt != DType::float32) {
    on_widened(call, {0, 2}, "sgd_step",
               [&](const std::vector<Tensor>& w) { sgd_one(w[0], w[1], w.size() > 2 ? w[2] : Tensor(), a, dt); });
    return;
  }
  check_copy(call, "sgd_step");
  sgd_one(call.in(0), call.in(1), optional_input(call, 2), a, dt);
  write_copy(call);
}

void adam_step_kernel(OpCall& call) {
  const DType dt = call.in(0).dtype();
  const AdamStepAttrs& a = call.attrs<AdamStepAttrs>();
  if (dt != DType::float32) {
    on_widened(call, {0, 2, 3, 4}, "adam_step", [&](const std::vector<Tensor>& w) {
      adam_one(w[0], w[1], w[2], w[3], w.size() > 4 ? w[4] : Tensor(), a, dt);
    });
    return;
  }
  check_copy(call, "adam_step");
  adam_one(call.in(0), call.in(1), call.in(2), call.in(3), optional_input(call, 4), a, dt);
  write_copy(call);
}

const DTypeSet kFloat = {DType::float32, DType::float16, DType::bfloat16};

HEARTH_REGISTER_KERNEL(sgd_step, vulkan_kind(), sgd_step_kernel, kFloat);
HEARTH_REGISTER_KERNEL(adam_step, vulkan_kind(), adam_step_kernel, kFloat);

}  // namespace
}  // namespace hearth::vulkan
