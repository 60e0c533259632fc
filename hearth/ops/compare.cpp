// Comparisons (eq, ne, lt, le, gt, ge) and logical_and/or/xor. The
// operands are promoted to their common dtype first, so 1 == 1.0 holds and an
// integer tensor compares to 0.5 as a float; results are bool and carry no
// gradient.
#include "hearth/ops/factory.h"
#include "hearth/ops/type_promotion.h"
#include "hearth/ops/unary_util.h"

namespace hearth {
namespace {

Tensor as_dtype(const Tensor& t, DType d) { return t.dtype() == d ? t.detach() : cast(t.detach(), d); }

Tensor compare(const char* name, OpHandle op, const Tensor& a, const Tensor& b) {
  detail::check_defined(name, a, "input");
  detail::check_defined(name, b, "other");
  Device device = common_device(name, {a, b});
  Shape shape = broadcast_shapes(a.shape(), b.shape(), name);
  DType dt = result_type(a, b);
  Tensor out = Tensor::empty(shape, DType::bool_, device);
  if (out.numel() > 0) detail::run(op, {as_dtype(a, dt), as_dtype(b, dt)}, {out});
  return out;
}

Tensor compare(const char* name, OpHandle op, const Tensor& a, const Scalar& b) {
  detail::check_defined(name, a, "input");
  return compare(name, op, a, scalar_tensor(b, result_type(a, b), a.device()));
}

}  // namespace

Tensor eq(const Tensor& a, const Tensor& b) {
  static OpHandle op = detail::op_handle(OpId::eq);
  return compare("eq", op, a, b);
}
Tensor ne(const Tensor& a, const Tensor& b) {
  static OpHandle op = detail::op_handle(OpId::ne);
  return compare("ne", op, a, b);
}
Tensor lt(const Tensor& a, const Tensor& b) {
  static OpHandle op = detail::op_handle(OpId::lt);
  return compare("lt", op, a, b);
}
Tensor le(const Tensor& a, const Tensor& b) {
  static OpHandle op = detail::op_handle(OpId::le);
  return compare("le", op, a, b);
}
Tensor gt(const Tensor& a, const Tensor& b) {
  static OpHandle op = detail::op_handle(OpId::gt);
  return compare("gt", op, a, b);
}
Tensor ge(const Tensor& a, const Tensor& b) {
  static OpHandle op = detail::op_handle(OpId::ge);
  return compare("ge", op, a, b);
}
Tensor eq(const Tensor& a, const Scalar& b) {
  static OpHandle op = detail::op_handle(OpId::eq);
  return compare("eq", op, a, b);
}
Tensor ne(const Tensor& a, const Scalar& b) {
  static OpHandle op = detail::op_handle(OpId::ne);
  return compare("ne", op, a, b);
}
Tensor lt(const Tensor& a, const Scalar& b) {
  static OpHandle op = detail::op_handle(OpId::lt);
  return compare("lt", op, a, b);
}
Tensor le(const Tensor& a, const Scalar& b) {
  static OpHandle op = detail::op_handle(OpId::le);
  return compare("le", op, a, b);
}
Tensor gt(const Tensor& a, const Scalar& b) {
  static OpHandle op = detail::op_handle(OpId::gt);
  return compare("gt", op, a, b);
}
Tensor ge(const Tensor& a, const Scalar& b) {
  static OpHandle op = detail::op_handle(OpId::ge);
  return compare("ge", op, a, b);
}
Tensor logical_and(const Tensor& a, const Tensor& b) {
  static OpHandle op = detail::op_handle(OpId::logical_and);
  return compare("logical_and", op, a, b);
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  static OpHandle op = detail::op_handle(OpId::logical_or);
  return compare("logical_or", op, a, b);
}
Tensor logical_xor(const Tensor& a, const Tensor& b) {
  static OpHandle op = detail::op_handle(OpId::logical_xor);
  return compare("logical_xor", op, a, b);
}

}  // namespace hearth
