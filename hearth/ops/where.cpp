// where (cond ? a : b) and masked_fill, which is where with a constant: one
// kernel serves both, so a backend implements selection once.
#include "hearth/autograd/function.h"
#include "hearth/ops/binary_util.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/type_promotion.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;
using autograd::sum_to_shape;

OpHandle where_op() {
  static OpHandle op = detail::op_handle(OpId::where);
  return op;
}

void check_bool_mask(const char* name, const Tensor& mask, const char* arg) {
  detail::check_defined(name, mask, arg);
  HEARTH_CHECK(mask.dtype() == DType::bool_, TypeError, "[", name, "] expected '", arg, "' to be a bool tensor, got ",
               dtype_name(mask.dtype()), "; compare first (e.g. ne(", arg, ", 0))");
}

Tensor select(const char* name, const char* backward_name, const Tensor& cond, const Tensor& a, const Tensor& b) {
  detail::check_defined(name, a, "input");
  detail::check_defined(name, b, "other");
  Device device = common_device(name, {cond, a, b});
  Shape shape = broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), name), b.shape(), name);
  DType dt = result_type(a, b);
  Tensor out = Tensor::empty(shape, dt, device);
  if (out.numel() > 0)
    detail::run(where_op(), {detail::detached_as(a, dt), detail::detached_as(b, dt), cond.detach()}, {out});
  if (autograd::any_requires_grad({a, b})) {
    autograd::record(backward_name, {a, b}, {out},
                     [sc = SavedTensor(cond), sa = a.shape(), sb = b.shape()](const BackwardContext& c) {
                       const Tensor& g = c.grad(0);
                       Tensor cnd = sc.unpack(c.name());
                       Tensor zero = scalar_tensor(0, g.dtype(), g.device());
                       Tensor ga, gb;
                       if (c.needs(0)) ga = sum_to_shape(where(cnd, g, zero), sa);
                       if (c.needs(1)) gb = sum_to_shape(where(cnd, zero, g), sb);
                       return std::vector<Tensor>{ga, gb};
                     });
  }
  return out;
}

}  // namespace

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_bool_mask("where", cond, "condition");
  return select("where", "WhereBackward", cond, a, b);
}

Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b) {
  check_bool_mask("where", cond, "condition");
  detail::check_defined("where", a, "input");
  return select("where", "WhereBackward", cond, a, scalar_tensor(b, result_type(a, b), a.device()));
}

// The fill value takes a's dtype (it is not promoted), as in PyTorch.
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Scalar& value) {
  detail::check_defined("masked_fill", a, "input");
  check_bool_mask("masked_fill", mask, "mask");
  return select("masked_fill", "MaskedFillBackward", mask, scalar_tensor(value, a.dtype(), a.device()), a);
}

const Tensor& masked_fill_(const Tensor& a, const Tensor& mask, const Scalar& value) {
  detail::check_defined("masked_fill_", a, "input");
  check_bool_mask("masked_fill_", mask, "mask");
  detail::check_inplace_allowed("masked_fill_", a);
  HEARTH_CHECK(broadcast_shapes(a.shape(), mask.shape(), "masked_fill_") == a.shape(), ShapeError,
               "[masked_fill_] mask of shape ", mask.shape_string(), " does not broadcast to the destination shape ",
               a.shape_string());
  HEARTH_CHECK(!autograd::any_requires_grad({a}), AutogradError,
               "[masked_fill_] in-place ops on tensors that require grad are not supported; use masked_fill()");
  common_device("masked_fill_", {a, mask});
  if (a.numel() == 0) return a;
  detail::run(where_op(), {scalar_tensor(value, a.dtype(), a.device()), a, mask}, {a});
  a.bump_version();
  return a;
}

}  // namespace hearth
