// Unary math: neg, abs, exp, log, sqrt, rsqrt, sign, square, with autograd;
// and the bool-valued logical_not, isnan and isfinite (no gradient).
#include "hearth/autograd/function.h"
#include "hearth/ops/autocast_policy.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/unary_util.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

void check_not_bool(const char* name, const Tensor& a, const char* instead) {
  HEARTH_CHECK(a.dtype() != DType::bool_, TypeError, "[", name, "] is not supported for bool tensors", instead);
}

}  // namespace

Tensor neg(const Tensor& a) {
  static OpHandle op = detail::op_handle(OpId::neg);
  detail::check_defined("neg", a, "input");
  check_not_bool("neg", a, "; use logical_not to invert a mask");
  Tensor out = detail::unary_forward(op, a, a.dtype());
  autograd::record("NegBackward", {a}, {out},
                   [](const BackwardContext& c) { return std::vector<Tensor>{neg(c.grad(0))}; });
  return out;
}

Tensor abs(const Tensor& a) {
  static OpHandle op = detail::op_handle(OpId::abs);
  detail::check_defined("abs", a, "input");
  check_not_bool("abs", a, "");
  Tensor out = detail::unary_forward(op, a, a.dtype());
  if (autograd::any_requires_grad({a})) {
    autograd::record("AbsBackward", {a}, {out}, [sa = SavedTensor(a)](const BackwardContext& c) {
      return std::vector<Tensor>{mul(c.grad(0), sign(sa.unpack(c.name())))};
    });
  }
  return out;
}

Tensor exp(const Tensor& a) {
  if (auto ac = detail::autocast("exp", a)) return exp(ac[0]);
  static OpHandle op = detail::op_handle(OpId::exp);
  detail::check_defined("exp", a, "input");
  Tensor out = detail::unary_forward(op, a, detail::float_op_dtype(a.dtype()));
  if (autograd::any_requires_grad({a})) {
    autograd::record("ExpBackward", {a}, {out}, [so = SavedTensor(out)](const BackwardContext& c) {
      return std::vector<Tensor>{mul(c.grad(0), so.unpack(c.name()))};
    });
  }
  return out;
}

Tensor log(const Tensor& a) {
  if (auto ac = detail::autocast("log", a)) return log(ac[0]);
  static OpHandle op = detail::op_handle(OpId::log);
  detail::check_defined("log", a, "input");
  Tensor out = detail::unary_forward(op, a, detail::float_op_dtype(a.dtype()));
  if (autograd::any_requires_grad({a})) {
    autograd::record("LogBackward", {a}, {out}, [sa = SavedTensor(a)](const BackwardContext& c) {
      return std::vector<Tensor>{div(c.grad(0), sa.unpack(c.name()))};
    });
  }
  return out;
}

Tensor sqrt(const Tensor& a) {
  static OpHandle op = detail::op_handle(OpId::sqrt);
  detail::check_defined("sqrt", a, "input");
  Tensor out = detail::unary_forward(op, a, detail::float_op_dtype(a.dtype()));
  if (autograd::any_requires_grad({a})) {
    // d sqrt(x) = 1 / (2 sqrt(x))
    autograd::record("SqrtBackward", {a}, {out}, [so = SavedTensor(out)](const BackwardContext& c) {
      return std::vector<Tensor>{div(c.grad(0), mul(so.unpack(c.name()), 2.0))};
    });
  }
  return out;
}

Tensor rsqrt(const Tensor& a) {
  if (auto ac = detail::autocast("rsqrt", a)) return rsqrt(ac[0]);
  static OpHandle op = detail::op_handle(OpId::rsqrt);
  detail::check_defined("rsqrt", a, "input");
  Tensor out = detail::unary_forward(op, a, detail::float_op_dtype(a.dtype()));
  if (autograd::any_requires_grad({a})) {
    // d x^(-1/2) = -1/2 x^(-3/2) = -1/2 out^3
    autograd::record("RsqrtBackward", {a}, {out}, [so = SavedTensor(out)](const BackwardContext& c) {
      Tensor o = so.unpack(c.name());
      return std::vector<Tensor>{mul(c.grad(0), mul(mul(o, square(o)), -0.5))};
    });
  }
  return out;
}

// Piecewise constant: its gradient is zero everywhere it exists.
Tensor sign(const Tensor& a) {
  static OpHandle op = detail::op_handle(OpId::sign);
  detail::check_defined("sign", a, "input");
  if (a.dtype() == DType::bool_) return a.detach().clone();
  Tensor out = detail::unary_forward(op, a, a.dtype());
  autograd::record("SignBackward", {a}, {out},
                   [](const BackwardContext& c) { return std::vector<Tensor>{zeros_like(c.grad(0))}; });
  return out;
}

// Bool squares as int64, as pow(bool, 2) promotes in PyTorch.
Tensor square(const Tensor& a) {
  static OpHandle op = detail::op_handle(OpId::square);
  detail::check_defined("square", a, "input");
  DType dt = a.dtype() == DType::bool_ ? DType::int64 : a.dtype();
  Tensor out = detail::unary_forward(op, a, dt);
  if (autograd::any_requires_grad({a})) {
    autograd::record("SquareBackward", {a}, {out}, [sa = SavedTensor(a)](const BackwardContext& c) {
      return std::vector<Tensor>{mul(c.grad(0), mul(sa.unpack(c.name()), 2.0))};
    });
  }
  return out;
}

Tensor logical_not(const Tensor& a) {
  static OpHandle op = detail::op_handle(OpId::logical_not);
  detail::check_defined("logical_not", a, "input");
  return detail::unary_forward(op, a, a.dtype(), DType::bool_);
}

Tensor isnan(const Tensor& a) {
  static OpHandle op = detail::op_handle(OpId::isnan);
  detail::check_defined("isnan", a, "input");
  return detail::unary_forward(op, a, a.dtype(), DType::bool_);
}

Tensor isfinite(const Tensor& a) {
  static OpHandle op = detail::op_handle(OpId::isfinite);
  detail::check_defined("isfinite", a, "input");
  return detail::unary_forward(op, a, a.dtype(), DType::bool_);
}

Tensor Tensor::exp() const { return hearth::exp(*this); }
Tensor Tensor::log() const { return hearth::log(*this); }
Tensor Tensor::sqrt() const { return hearth::sqrt(*this); }
Tensor Tensor::abs() const { return hearth::abs(*this); }

}  // namespace hearth
