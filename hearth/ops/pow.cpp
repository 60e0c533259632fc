// pow with a tensor or a scalar exponent, with broadcasting, PyTorch's type
// promotion (integer powers stay integers) and autograd for both operands.
#include "hearth/autograd/function.h"
#include "hearth/ops/autocast_policy.h"
#include "hearth/ops/binary_util.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/type_promotion.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;
using autograd::sum_to_shape;

OpHandle pow_op() {
  static OpHandle op = detail::op_handle(OpId::pow);
  return op;
}

void check_not_bool(DType dt) {
  HEARTH_CHECK(dt != DType::bool_, TypeError,
               "[pow] is not supported for bool base and exponent; cast the base to an integer or float dtype");
}

}  // namespace

Tensor pow(const Tensor& a, const Tensor& exponent) {
  if (auto ac = detail::autocast("pow", a, exponent)) return pow(ac[0], ac[1]);
  detail::check_defined("pow", a, "input");
  detail::check_defined("pow", exponent, "exponent");
  DType dt = result_type(a, exponent);
  check_not_bool(dt);
  Tensor out = detail::binary_forward("pow", pow_op(), a, exponent, dt);
  if (autograd::any_requires_grad({a, exponent})) {
    autograd::record(
        "PowBackward", {a, exponent}, {out},
        [sa = SavedTensor(a), sb = SavedTensor(exponent), so = SavedTensor(out)](const BackwardContext& c) {
          const Tensor& g = c.grad(0);
          Tensor av = sa.unpack(c.name()), bv = sb.unpack(c.name());
          Tensor ga, gb;
          // d a^b / da = b a^(b-1), taken as 0 where b == 0 (a^0 is constant even at a = 0).
          if (c.needs(0)) ga = sum_to_shape(where(ne(bv, 0), mul(g, mul(bv, pow(av, sub(bv, 1)))), 0), av.shape());
          // d a^b / db = a^b log(a), taken as 0 where a == 0 and b >= 0 (the limit from the right).
          if (c.needs(1)) {
            Tensor defined_there = logical_or(ne(av, 0), lt(bv, 0));
            gb = sum_to_shape(where(defined_there, mul(g, mul(so.unpack(c.name()), log(av))), 0), bv.shape());
          }
          return std::vector<Tensor>{ga, gb};
        });
  }
  return out;
}

Tensor pow(const Tensor& a, const Scalar& exponent) {
  if (auto ac = detail::autocast("pow", a)) return pow(ac[0], exponent);
  detail::check_defined("pow", a, "input");
  HEARTH_CHECK(!(is_integral(a.dtype(), /*include_bool=*/true) && exponent.category() != DTypeCategory::floating &&
                 exponent.to_int() < 0),
               ValueError, "[pow] integers to negative integer powers are not allowed (got exponent ",
               exponent.to_int(), " for a ", dtype_name(a.dtype()), " tensor); use a float base");
  DType dt = result_type(a, exponent);
  check_not_bool(dt);
  Tensor out = detail::binary_forward("pow", pow_op(), a, scalar_tensor(exponent, dt, a.device()), dt);
  if (autograd::any_requires_grad({a})) {
    autograd::record("PowBackward", {a}, {out}, [sa = SavedTensor(a), exponent](const BackwardContext& c) {
      const Tensor& g = c.grad(0);
      if (exponent.to_double() == 0.0) return std::vector<Tensor>{zeros_like(g)};
      Tensor av = sa.unpack(c.name());
      Scalar minus_one = exponent.category() == DTypeCategory::floating ? Scalar(exponent.to_double() - 1.0)
                                                                        : Scalar(exponent.to_int() - 1);
      return std::vector<Tensor>{mul(g, mul(pow(av, minus_one), exponent))};
    });
  }
  return out;
}

Tensor Tensor::pow(const Scalar& exponent) const { return hearth::pow(*this, exponent); }

}  // namespace hearth
