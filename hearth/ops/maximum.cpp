// maximum and minimum of two tensors, elementwise with broadcasting. NaN
// propagates; on ties the gradient is split half and half, as in PyTorch.
#include "hearth/autograd/function.h"
#include "hearth/ops/binary_util.h"
#include "hearth/ops/factory.h"
#include "hearth/ops/type_promotion.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;
using autograd::sum_to_shape;

// `wins` is gt for maximum, lt for minimum: where a wins it takes the whole gradient.
template <typename Wins>
Tensor extremum(const char* name, const char* backward_name, OpHandle op, const Tensor& a, const Tensor& b, Wins wins) {
  detail::check_defined(name, a, "input");
  detail::check_defined(name, b, "other");
  Tensor out = detail::binary_forward(name, op, a, b, result_type(a, b));
  if (autograd::any_requires_grad({a, b})) {
    autograd::record(backward_name, {a, b}, {out},
                     [sa = SavedTensor(a), sb = SavedTensor(b), wins](const BackwardContext& c) {
                       const Tensor& g = c.grad(0);
                       Tensor av = sa.unpack(c.name()), bv = sb.unpack(c.name());
                       Tensor zero = scalar_tensor(0, g.dtype(), g.device());
                       Tensor tie = eq(av, bv);
                       Tensor half = mul(g, 0.5);
                       Tensor ga, gb;
                       if (c.needs(0)) ga = sum_to_shape(where(tie, half, where(wins(av, bv), g, zero)), av.shape());
                       if (c.needs(1)) gb = sum_to_shape(where(tie, half, where(wins(bv, av), g, zero)), bv.shape());
                       return std::vector<Tensor>{ga, gb};
                     });
  }
  return out;
}

}  // namespace

Tensor maximum(const Tensor& a, const Tensor& b) {
  static OpHandle op = detail::op_handle(OpId::maximum);
  return extremum("maximum", "MaximumBackward", op, a, b, [](const Tensor& x, const Tensor& y) { return gt(x, y); });
}

Tensor minimum(const Tensor& a, const Tensor& b) {
  static OpHandle op = detail::op_handle(OpId::minimum);
  return extremum("minimum", "MinimumBackward", op, a, b, [](const Tensor& x, const Tensor& y) { return lt(x, y); });
}

}  // namespace hearth
