// The optimizer steps (hearth/optim/functional.h): checks, then one dispatched
// sgd_step/adam_step per parameter, or one foreach call per device and dtype.
// A parameter with a low-precision copy (param_half_copies.h) gets it written
// by the same call.
#include "hearth/dispatch/schemas/optim.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hearth/dispatch/registry.h"
#include "hearth/ops/composition.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/indexing.h"
#include "hearth/ops/nn_util.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/param_half_copies.h"
#include "hearth/ops/reduction.h"
#include "hearth/ops/view.h"
#include "hearth/optim/functional.h"

namespace hearth::optim {
namespace {

void check_like(const char* op, const Tensor& param, const Tensor& t, const char* arg) {
  HEARTH_CHECK(t.defined(), ValueError, "[", op, "] argument '", arg, "' is an undefined tensor");
  HEARTH_CHECK(t.shape() == param.shape(), ShapeError, "[", op, "] '", arg, "' has shape ", t.shape_string(),
               " but the parameter has shape ", param.shape_string());
  HEARTH_CHECK(t.dtype() == param.dtype(), TypeError, "[", op, "] '", arg, "' has dtype ", dtype_name(t.dtype()),
               " but the parameter has dtype ", dtype_name(param.dtype()));
  HEARTH_CHECK(t.device() == param.device(), DeviceError, "[", op, "] '", arg, "' is on ", t.device().str(),
               " but the parameter is on ", param.device().str());
}

void check_hyper(const char* op, bool ok, const char* what, double value) {
  HEARTH_CHECK(ok, ValueError, "[", op, "] invalid ", what, ": ", value);
}

// The kernels update a parameter's tensors as flat arrays, element k of each
// together. Tensors that share one dense layout (all contiguous, or all with
// the parameter's strides and dense, as channels_last weights with their
// channels_last gradients and state are) go to the kernel as they are; any
// other group is copied to contiguous tensors and written back, which for a
// channels_last CNN was two to four copies of every weight each step.
bool dense(const Tensor& t) {
  return t.is_contiguous() || (t.dim() == 4 && t.is_contiguous(MemoryFormat::channels_last));
}

bool one_flat_layout(const std::vector<Tensor>& group) {
  bool all_contiguous = true, same_strides = dense(group[0]);
  for (const Tensor& t : group) {
    if (!t.defined()) continue;
    all_contiguous = all_contiguous && t.is_contiguous();
    same_strides = same_strides && t.strides() == group[0].strides();
  }
  return all_contiguous || same_strides;
}

// A tensor the kernel may write: itself when dense in the group's layout,
// else a contiguous copy that finish() writes back.
struct Writable {
  Tensor user, arg;
  Writable(const Tensor& t, bool as_is)
      : user(t), arg(as_is || !t.defined() || t.is_contiguous() ? t : contiguous(t.detach())) {}
  void finish() const {
    if (!user.defined()) return;
    if (arg.is_same(user))
      user.bump_version();
    else
      copy_(user, arg);
  }
};

// The low-precision copy (param_half_copies.h) the update of `param` writes
// as well: only where the kernel writes the parameter itself, so the copy's
// flat order is the parameter's; a parameter updated through a contiguous
// copy has its weight cast by autocast as before.
Tensor copy_to_write(const Writable& param) {
  if (!param.arg.is_same(param.user)) return Tensor();
  return param_half_copy_to_write(param.user);
}

void run_step(OpHandle op, const std::vector<Tensor>& writable_in, const Tensor& grad, size_t grad_pos,
              const auto& attrs) {
  std::vector<Tensor> group = writable_in;
  group.push_back(grad);
  const bool as_is = one_flat_layout(group);
  std::vector<Writable> w;
  for (const Tensor& t : writable_in) w.emplace_back(t, as_is);
  std::vector<Tensor> inputs;
  for (const Writable& x : w) inputs.push_back(x.arg);
  inputs.insert(inputs.begin() + static_cast<std::ptrdiff_t>(grad_pos),
                as_is || grad.is_contiguous() ? grad : contiguous(grad));
  const Tensor copy = grad.numel() > 0 ? copy_to_write(w[0]) : Tensor();
  if (grad.numel() > 0) detail::run(op, inputs, copy.defined() ? std::vector<Tensor>{copy} : std::vector<Tensor>{}, attrs);
  for (const Writable& x : w) x.finish();
  if (copy.defined()) mark_param_half_copy_written(w[0].user, copy);
}

void check_sgd(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdStepAttrs& a) {
  detail::check_floating("sgd_step", param, "param");
  check_like("sgd_step", param, grad, "grad");
  check_hyper("sgd_step", a.lr >= 0, "learning rate", a.lr);
  check_hyper("sgd_step", a.momentum >= 0, "momentum", a.momentum);
  check_hyper("sgd_step", a.weight_decay >= 0, "weight_decay", a.weight_decay);
  HEARTH_CHECK(!a.nesterov || (a.momentum > 0 && a.dampening == 0), ValueError,
               "[sgd_step] Nesterov momentum requires a momentum > 0 and zero dampening, got momentum=", a.momentum,
               " dampening=", a.dampening);
  if (a.momentum != 0) check_like("sgd_step", param, momentum_buffer, "momentum_buffer");
  HEARTH_CHECK(a.momentum != 0 || !momentum_buffer.defined(), ValueError,
               "[sgd_step] a momentum_buffer was given but momentum is 0");
  detail::check_inplace_allowed("sgd_step", param);
}

void check_adam(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                const Tensor& max_exp_avg_sq, const AdamStepAttrs& a) {
  detail::check_floating("adam_step", param, "param");
  check_like("adam_step", param, grad, "grad");
  check_like("adam_step", param, exp_avg, "exp_avg");
  check_like("adam_step", param, exp_avg_sq, "exp_avg_sq");
  if (a.amsgrad) check_like("adam_step", param, max_exp_avg_sq, "max_exp_avg_sq");
  HEARTH_CHECK(a.amsgrad || !max_exp_avg_sq.defined(), ValueError,
               "[adam_step] a max_exp_avg_sq was given but amsgrad is off");
  check_hyper("adam_step", a.lr >= 0, "learning rate", a.lr);
  check_hyper("adam_step", a.eps >= 0, "epsilon value", a.eps);
  check_hyper("adam_step", a.beta1 >= 0 && a.beta1 < 1, "beta parameter at index 0", a.beta1);
  check_hyper("adam_step", a.beta2 >= 0 && a.beta2 < 1, "beta parameter at index 1", a.beta2);
  check_hyper("adam_step", a.weight_decay >= 0, "weight_decay value", a.weight_decay);
  HEARTH_CHECK(a.step >= 1, ValueError, "[adam_step] step counts the update being made and must be >= 1, got ", a.step);
  detail::check_inplace_allowed("adam_step", param);
}

// Runs a foreach op over groups of `per_group` tensors (grad at position 1 of
// each group), one call per (device, dtype) present. Where the backend has no
// foreach kernel, dispatch runs the op's composition (below): the
// single-tensor op per group, on the device.
template <typename Attrs>
void run_foreach(OpHandle op, size_t per_group, const std::vector<std::vector<Tensor>>& groups, const Attrs& attrs) {
  std::map<std::pair<std::string, int>, std::vector<size_t>> by_place;
  for (size_t i = 0; i < groups.size(); ++i) {
    const Tensor& p = groups[i][0];
    by_place[{p.device().str(), static_cast<int>(p.dtype())}].push_back(i);
  }
  for (const auto& [place, members] : by_place) {
    std::vector<Writable> w;
    std::vector<Tensor> inputs;
    // One output per group passed (the parameter's copy, or undefined);
    // none at all where no parameter has a copy.
    std::vector<Tensor> copies, copied_params;
    w.reserve(members.size() * per_group);
    for (size_t i : members) {
      const std::vector<Tensor>& g = groups[i];
      if (g[1].numel() == 0) continue;
      const bool as_is = one_flat_layout(g);
      for (size_t k = 0; k < per_group; ++k) {
        if (k == 1) {
          inputs.push_back(as_is || g[1].is_contiguous() ? g[1].detach() : contiguous(g[1].detach()));
          continue;
        }
        w.emplace_back(g[k], as_is);
        inputs.push_back(w.back().arg);
        if (k == 0) {
          copies.push_back(copy_to_write(w.back()));
          if (copies.back().defined()) copied_params.push_back(g[0]);
        }
      }
    }
    if (copied_params.empty()) copies.clear();
    if (!inputs.empty()) detail::run(op, inputs, copies, attrs);
    for (const Writable& x : w) x.finish();
    size_t next = 0;
    for (const Tensor& c : copies)
      if (c.defined()) mark_param_half_copy_written(copied_params[next++], c);
  }
}

void check_counts(const char* op, size_t params, size_t other, const char* what) {
  HEARTH_CHECK(other == params, ValueError, "[", op, "] got ", params, " parameters but ", other, " ", what);
}

}  // namespace

void sgd_step_(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdStepAttrs& a) {
  static OpHandle op = detail::op_handle(OpId::sgd_step);
  check_sgd(param, grad, momentum_buffer, a);
  run_step(op, {param, momentum_buffer}, grad.detach(), 1, a);
}

void adam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                const Tensor& max_exp_avg_sq, const AdamStepAttrs& a) {
  static OpHandle op = detail::op_handle(OpId::adam_step);
  check_adam(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, a);
  run_step(op, {param, exp_avg, exp_avg_sq, max_exp_avg_sq}, grad.detach(), 1, a);
}

void sgd_step_foreach_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                       const std::vector<Tensor>& momentum_buffers, const SgdStepAttrs& a) {
  static OpHandle op = detail::op_handle(OpId::sgd_step_foreach);
  check_counts("sgd_step_foreach", params.size(), grads.size(), "gradients");
  if (a.momentum != 0) check_counts("sgd_step_foreach", params.size(), momentum_buffers.size(), "momentum buffers");
  std::vector<std::vector<Tensor>> groups;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor buf = a.momentum != 0 ? momentum_buffers[i] : Tensor();
    check_sgd(params[i], grads[i], buf, a);
    groups.push_back({params[i], grads[i], buf});
  }
  run_foreach(op, 3, groups, a);
}

void adam_step_foreach_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                        const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                        const std::vector<Tensor>& max_exp_avg_sqs, const AdamStepAttrs& a) {
  static OpHandle op = detail::op_handle(OpId::adam_step_foreach);
  check_counts("adam_step_foreach", params.size(), grads.size(), "gradients");
  check_counts("adam_step_foreach", params.size(), exp_avgs.size(), "exp_avg tensors");
  check_counts("adam_step_foreach", params.size(), exp_avg_sqs.size(), "exp_avg_sq tensors");
  if (a.amsgrad) check_counts("adam_step_foreach", params.size(), max_exp_avg_sqs.size(), "max_exp_avg_sq tensors");
  std::vector<std::vector<Tensor>> groups;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor vmax = a.amsgrad ? max_exp_avg_sqs[i] : Tensor();
    check_adam(params[i], grads[i], exp_avgs[i], exp_avg_sqs[i], vmax, a);
    groups.push_back({params[i], grads[i], exp_avgs[i], exp_avg_sqs[i], vmax});
  }
  run_foreach(op, 5, groups, a);
}

Tensor clip_grad_norm_foreach_(const std::vector<Tensor>& grads, const ClipGradNormAttrs& a, bool* done) {
  static OpHandle op = detail::op_handle(OpId::clip_grad_norm_foreach);
  *done = false;
  HEARTH_CHECK(!grads.empty(), ValueError, "[clip_grad_norm_foreach] needs at least one gradient");
  check_hyper("clip_grad_norm_foreach", a.max_norm >= 0, "max_norm", a.max_norm);
  check_hyper("clip_grad_norm_foreach", a.norm_type > 0, "norm_type", a.norm_type);
  const Tensor& first = grads.front();
  detail::check_floating("clip_grad_norm_foreach", first, "grads[0]");
  for (size_t i = 1; i < grads.size(); ++i) {
    HEARTH_CHECK(grads[i].dtype() == first.dtype() && grads[i].device() == first.device(), TypeError,
                 "[clip_grad_norm_foreach] gradient ", i, " is ", dtype_name(grads[i].dtype()), " on ",
                 grads[i].device().str(), "; gradient 0 is ", dtype_name(first.dtype()), " on ", first.device().str());
  }
  // Where the backend has no kernel, dispatch runs the composition (below).
  std::vector<Writable> w;
  std::vector<Tensor> inputs;
  w.reserve(grads.size());
  for (const Tensor& g : grads) {
    w.emplace_back(g, dense(g));
    inputs.push_back(w.back().arg);
  }
  const DType acc = first.dtype() == DType::float64 ? DType::float64 : DType::float32;
  Tensor total = Tensor::empty({}, acc, first.device());
  detail::run(op, inputs, {total}, a);
  for (const Writable& x : w) x.finish();
  *done = true;
  return total;
}

// The compositions of the foreach steps (hearth/dispatch/schemas/optim.h):
// the single-parameter op once per group, each writing its group's copy; and
// clip_grad_norm_foreach of norms, a clamp and a product, the coefficient
// kept on the device.
namespace {

// Runs `single` over each group of `stride` inputs, with the group's copy
// (the call's outputs are none, or one per group).
void compose_foreach(OpCall& call, OpHandle single, size_t stride) {
  const size_t groups = call.inputs.size() / stride;
  for (size_t i = 0; i < groups; ++i) {
    OpCall one;
    one.inputs.assign(call.inputs.begin() + static_cast<std::ptrdiff_t>(i * stride),
                      call.inputs.begin() + static_cast<std::ptrdiff_t>((i + 1) * stride));
    if (!call.outputs.empty() && call.outputs[i].defined()) one.outputs = {call.outputs[i]};
    one.attrs_ptr = call.attrs_ptr;
    one.attrs_type = call.attrs_type;
    dispatch(single, one);
  }
}

void compose_sgd_step_foreach(OpCall& call) {
  static OpHandle single = detail::op_handle(OpId::sgd_step);
  compose_foreach(call, single, 3);
}

void compose_adam_step_foreach(OpCall& call) {
  static OpHandle single = detail::op_handle(OpId::adam_step);
  compose_foreach(call, single, 5);
}

void compose_clip_grad_norm_foreach(OpCall& call) {
  detail::CompositionScope scope;
  const auto& a = call.attrs<ClipGradNormAttrs>();
  const DType acc = call.out(0).dtype();
  std::vector<Tensor> norms;
  norms.reserve(call.inputs.size());
  for (const Tensor& g : call.inputs) norms.push_back(norm(detail::as_dtype(g, acc), a.norm_type).reshape({1}));
  const Tensor total = norm(cat(norms), a.norm_type);
  const Tensor coef = clamp_max(div(scalar_tensor(a.max_norm, acc, total.device()), add(total, 1e-6)), 1.0);
  for (const Tensor& g : call.inputs) copy_(g, mul(g, detail::as_dtype(coef, g.dtype())));
  copy_(call.out(0), total);
}

HEARTH_REGISTER_COMPOSITION(sgd_step_foreach, compose_sgd_step_foreach);
HEARTH_REGISTER_COMPOSITION(adam_step_foreach, compose_adam_step_foreach);
HEARTH_REGISTER_COMPOSITION(clip_grad_norm_foreach, compose_clip_grad_norm_foreach);

}  // namespace

}  // namespace hearth::optim
