// add, sub, mul, div: broadcasting, type promotion, autograd.
#include "hearth/dispatch/schemas/binary.h"

#include "hearth/autograd/function.h"
#include "hearth/ops/elementwise.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/op_utils.h"
#include "hearth/ops/type_promotion.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;
using autograd::sum_to_shape;

Tensor as_dtype(const Tensor& t, DType d) { return t.dtype() == d ? t : cast(t, d); }

// Computes out = op(a, b) in dtype `compute` with out of dtype `out_dtype`.
Tensor binary_forward(const char* name, OpHandle op, const Tensor& a, const Tensor& b, DType compute,
                      const Scalar* alpha) {
  detail::check_defined(name, a, "input");
  detail::check_defined(name, b, "other");
  Device device = common_device(name, {a, b});
  Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  Tensor out = detail::empty_like_inputs(shape, compute, device, {a, b});
  if (out.numel() == 0) return out;
  if (alpha)
    detail::run(op, {as_dtype(a, compute), as_dtype(b, compute)}, {out}, AlphaAttrs{*alpha});
  else
    detail::run(op, {as_dtype(a, compute), as_dtype(b, compute)}, {out});
  return out;
}

Tensor wrap(const Scalar& s, const Tensor& like, DType dtype) { return scalar_tensor(s, dtype, like.device()); }

// Before anything reads their dtypes.
void check_operands(const char* name, const Tensor& a, const Tensor& b) {
  detail::check_defined(name, a, "input");
  detail::check_defined(name, b, "other");
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  static OpHandle op = detail::op_handle(OpId::add);
  check_operands("add", a, b);
  DType dt = result_type(a, b);
  Tensor out = binary_forward("add", op, a, b, dt, &alpha);
  autograd::record("AddBackward", {a, b}, {out}, [sa = a.shape(), sb = b.shape(), alpha](const BackwardContext& c) {
    const Tensor& g = c.grad(0);
    Tensor ga = c.needs(0) ? sum_to_shape(g, sa) : Tensor();
    Tensor gb;
    if (c.needs(1)) gb = sum_to_shape(alpha.to_double() == 1.0 ? g : mul(g, alpha), sb);
    return std::vector<Tensor>{ga, gb};
  });
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  static OpHandle op = detail::op_handle(OpId::sub);
  check_operands("sub", a, b);
  HEARTH_CHECK(!(a.dtype() == DType::bool_ && b.dtype() == DType::bool_), TypeError,
               "[sub] subtraction of two bool tensors is not supported; use logical_xor");
  DType dt = result_type(a, b);
  Tensor out = binary_forward("sub", op, a, b, dt, &alpha);
  autograd::record("SubBackward", {a, b}, {out}, [sa = a.shape(), sb = b.shape(), alpha](const BackwardContext& c) {
    const Tensor& g = c.grad(0);
    Tensor ga = c.needs(0) ? sum_to_shape(g, sa) : Tensor();
    Tensor gb = c.needs(1) ? sum_to_shape(mul(g, -alpha.to_double()), sb) : Tensor();
    return std::vector<Tensor>{ga, gb};
  });
  return out;
}

Tensor mul(const Tensor& a, const Tensor& b) {
  static OpHandle op = detail::op_handle(OpId::mul);
  check_operands("mul", a, b);
  DType dt = result_type(a, b);
  Tensor out = binary_forward("mul", op, a, b, dt, nullptr);
  if (autograd::any_requires_grad({a, b})) {
    autograd::record("MulBackward", {a, b}, {out},
                     [sa = SavedTensor(a), sb = SavedTensor(b)](const BackwardContext& c) {
                       const Tensor& g = c.grad(0);
                       Tensor ga, gb;
                       if (c.needs(0)) ga = sum_to_shape(mul(g, sb.unpack(c.name())), sa.unpack(c.name()).shape());
                       if (c.needs(1)) gb = sum_to_shape(mul(g, sa.unpack(c.name())), sb.unpack(c.name()).shape());
                       return std::vector<Tensor>{ga, gb};
                     });
  }
  return out;
}

Tensor div(const Tensor& a, const Tensor& b) {
  static OpHandle op = detail::op_handle(OpId::div);
  check_operands("div", a, b);
  DType dt = result_type(a, b);
  if (!is_floating(dt)) dt = DType::float32;  // true division
  Tensor out = binary_forward("div", op, a, b, dt, nullptr);
  if (autograd::any_requires_grad({a, b})) {
    autograd::record("DivBackward", {a, b}, {out},
                     [sa = SavedTensor(a), sb = SavedTensor(b)](const BackwardContext& c) {
                       const Tensor& g = c.grad(0);
                       Tensor bv = sb.unpack(c.name());
                       Tensor ga, gb;
                       if (c.needs(0)) ga = sum_to_shape(div(g, bv), sa.unpack(c.name()).shape());
                       if (c.needs(1)) {
                         Tensor av = sa.unpack(c.name());
                         gb = sum_to_shape(neg(div(mul(g, av), mul(bv, bv))), bv.shape());
                       }
                       return std::vector<Tensor>{ga, gb};
                     });
  }
  return out;
}

Tensor add(const Tensor& a, const Scalar& b) {
  detail::check_defined("add", a, "input");
  return add(a, wrap(b, a, result_type(a, b)));
}
Tensor sub(const Tensor& a, const Scalar& b) {
  detail::check_defined("sub", a, "input");
  return sub(a, wrap(b, a, result_type(a, b)));
}
Tensor mul(const Tensor& a, const Scalar& b) {
  detail::check_defined("mul", a, "input");
  return mul(a, wrap(b, a, result_type(a, b)));
}
Tensor div(const Tensor& a, const Scalar& b) {
  detail::check_defined("div", a, "input");
  return div(a, wrap(b, a, result_type(a, b)));
}
Tensor rsub(const Tensor& a, const Scalar& b) {
  detail::check_defined("rsub", a, "input");
  return sub(wrap(b, a, result_type(a, b)), a);
}

const Tensor& add_(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  static OpHandle op = detail::op_handle(OpId::add);
  detail::check_inplace_allowed("add_", a);
  HEARTH_CHECK(broadcast_shapes(a.shape(), b.shape(), "add_") == a.shape(), ShapeError, "[add_] other of shape ",
               b.shape_string(), " does not broadcast to the destination shape ", a.shape_string());
  HEARTH_CHECK(!(autograd::any_requires_grad({a, b})), AutogradError,
               "[add_] in-place ops on tensors that require grad are not supported; use add()");
  common_device("add_", {a, b});
  // A half b into a float32 a is widened by the kernel as it reads it (schemas/binary.h).
  const bool widening = a.dtype() == DType::float32 && (b.dtype() == DType::bfloat16 || b.dtype() == DType::float16);
  detail::run(op, {a, widening ? b : as_dtype(b, a.dtype())}, {a}, AlphaAttrs{alpha});
  a.bump_version();
  return a;
}

const Tensor& sub_(const Tensor& a, const Tensor& b, const Scalar& alpha) { return add_(a, b, -alpha.to_double()); }

const Tensor& mul_(const Tensor& a, const Tensor& b) {
  static OpHandle op = detail::op_handle(OpId::mul);
  detail::check_inplace_allowed("mul_", a);
  HEARTH_CHECK(broadcast_shapes(a.shape(), b.shape(), "mul_") == a.shape(), ShapeError, "[mul_] other of shape ",
               b.shape_string(), " does not broadcast to the destination shape ", a.shape_string());
  HEARTH_CHECK(!(autograd::any_requires_grad({a, b})), AutogradError,
               "[mul_] in-place ops on tensors that require grad are not supported; use mul()");
  common_device("mul_", {a, b});
  detail::run(op, {a, as_dtype(b, a.dtype())}, {a});
  a.bump_version();
  return a;
}

const Tensor& mul_(const Tensor& a, const Scalar& b) { return mul_(a, scalar_tensor(b, a.dtype(), a.device())); }
const Tensor& div_(const Tensor& a, const Scalar& b) { return mul_(a, 1.0 / b.to_double()); }

}  // namespace hearth
