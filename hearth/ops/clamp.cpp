// clamp, clamp_min, clamp_max and clamp_: bounds are scalars that take part in
// type promotion (an integer tensor clamped to 0.5 becomes float32). The
// gradient flows where the input lies within the bounds, ends included.
#include "hearth/dispatch/schemas/clamp.h"

#include "hearth/autograd/function.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/type_promotion.h"
#include "hearth/ops/unary_util.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

OpHandle clamp_op() {
  static OpHandle op = detail::op_handle(OpId::clamp);
  return op;
}

ClampAttrs make_attrs(const Scalar* min, const Scalar* max) {
  ClampAttrs at;
  if (min) {
    at.min = *min;
    at.has_min = true;
  }
  if (max) {
    at.max = *max;
    at.has_max = true;
  }
  return at;
}

DType clamp_dtype(const char* name, const Tensor& a, const ClampAttrs& at) {
  detail::check_defined(name, a, "input");
  DType dt = a.dtype();
  if (at.has_min) dt = promote_types(dt, result_type(a, at.min));
  if (at.has_max) dt = promote_types(dt, result_type(a, at.max));
  HEARTH_CHECK(dt != DType::bool_, TypeError, "[", name, "] is not supported for bool tensors");
  return dt;
}

Tensor clamp_impl(const char* name, const Tensor& a, const ClampAttrs& at) {
  DType dt = clamp_dtype(name, a, at);
  Tensor out = detail::unary_forward(clamp_op(), a, dt, at);
  if (autograd::any_requires_grad({a})) {
    autograd::record("ClampBackward", {a}, {out}, [sa = SavedTensor(a), at](const BackwardContext& c) {
      Tensor x = sa.unpack(c.name());
      Tensor inside;
      if (at.has_min) inside = ge(x, at.min);
      if (at.has_max) inside = inside.defined() ? logical_and(inside, le(x, at.max)) : le(x, at.max);
      return std::vector<Tensor>{where(inside, c.grad(0), 0)};
    });
  }
  return out;
}

}  // namespace

Tensor clamp(const Tensor& a, const Scalar& min, const Scalar& max) {
  return clamp_impl("clamp", a, make_attrs(&min, &max));
}
Tensor clamp_min(const Tensor& a, const Scalar& min) { return clamp_impl("clamp_min", a, make_attrs(&min, nullptr)); }
Tensor clamp_max(const Tensor& a, const Scalar& max) { return clamp_impl("clamp_max", a, make_attrs(nullptr, &max)); }

const Tensor& clamp_(const Tensor& a, const Scalar& min, const Scalar& max) {
  const ClampAttrs at = make_attrs(&min, &max);
  DType dt = clamp_dtype("clamp_", a, at);
  HEARTH_CHECK(dt == a.dtype(), TypeError, "[clamp_] result type ", dtype_name(dt),
               " can't be cast to the desired output type ", dtype_name(a.dtype()),
               "; use clamp() for a new tensor, or bounds of the tensor's kind");
  detail::check_inplace_allowed("clamp_", a);
  HEARTH_CHECK(!autograd::any_requires_grad({a}), AutogradError,
               "[clamp_] in-place ops on tensors that require grad are not supported; use clamp()");
  if (a.numel() == 0) return a;
  detail::run(clamp_op(), {a}, {a}, at);
  a.bump_version();
  return a;
}

}  // namespace hearth
