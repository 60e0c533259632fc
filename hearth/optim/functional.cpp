#include "hearth/optim/functional.h"

#include <vector>

#include "hearth/ops/elementwise.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/view.h"

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

// A tensor the kernel may write: itself when dense, else a dense copy that
// finish() writes back.
struct Writable {
  Tensor user, arg;
  explicit Writable(const Tensor& t) : user(t), arg(!t.defined() || t.is_contiguous() ? t : contiguous(t.detach())) {}
  void finish() const {
    if (!user.defined()) return;
    if (arg.is_same(user))
      user.bump_version();
    else
      copy_(user, arg);
  }
};

void run_step(OpHandle op, const std::vector<Tensor>& writable_in, const Tensor& grad, size_t grad_pos,
              const auto& attrs) {
  std::vector<Writable> w;
  for (const Tensor& t : writable_in) w.emplace_back(t);
  std::vector<Tensor> inputs;
  for (const Writable& x : w) inputs.push_back(x.arg);
  inputs.insert(inputs.begin() + static_cast<std::ptrdiff_t>(grad_pos), grad.is_contiguous() ? grad : contiguous(grad));
  if (grad.numel() > 0) detail::run(op, inputs, {}, attrs);
  for (const Writable& x : w) x.finish();
}

}  // namespace

void sgd_step_(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdStepAttrs& a) {
  static OpHandle op = detail::op_handle("sgd_step", {0, 2});
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
  run_step(op, {param, momentum_buffer}, grad.detach(), 1, a);
}

void adam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                const Tensor& max_exp_avg_sq, const AdamStepAttrs& a) {
  static OpHandle op = detail::op_handle("adam_step", {0, 2, 3, 4});
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
  run_step(op, {param, exp_avg, exp_avg_sq, max_exp_avg_sq}, grad.detach(), 1, a);
}

}  // namespace hearth::optim
