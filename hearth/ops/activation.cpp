// Activations: relu, sigmoid, tanh, silu, gelu, with autograd.
#include "hearth/dispatch/schemas/activation.h"

#include "hearth/autograd/function.h"
#include "hearth/ops/unary_util.h"
#include "hearth/ops/view.h"

namespace hearth {
namespace {

using autograd::BackwardContext;
using autograd::SavedTensor;

}  // namespace

// grad where y > 0, else 0; differentiable in grad (for double backward).
Tensor relu_backward(const Tensor& grad, const Tensor& y) {
  static OpHandle op = detail::op_handle(OpId::relu_backward);
  Tensor g = grad.dtype() == y.dtype() ? grad : cast(grad, y.dtype());
  // Dense operands of one layout take the backends' flat path: NHWC stays NHWC.
  const MemoryFormat fmt = y.suggest_memory_format();
  Tensor gx = Tensor::empty(y.shape(), y.dtype(), y.device(), fmt);
  if (gx.numel() > 0) detail::run(op, {contiguous(g, fmt), contiguous(y, fmt)}, {gx});
  if (autograd::any_requires_grad({grad})) {
    autograd::record("ReluBackwardBackward", {grad}, {gx}, [sy = SavedTensor(y)](const BackwardContext& c) {
      return std::vector<Tensor>{relu_backward(c.grad(0), sy.unpack(c.name()))};
    });
  }
  return gx;
}

Tensor relu(const Tensor& a) {
  static OpHandle op = detail::op_handle(OpId::relu);
  detail::check_defined("relu", a, "input");
  HEARTH_CHECK(a.dtype() != DType::bool_, TypeError, "[relu] is not supported for bool tensors");
  Tensor out = detail::unary_forward(op, a, a.dtype());
  if (autograd::any_requires_grad({a})) {
    // The output's sign decides, so the saved tensor is the one the next op keeps anyway.
    autograd::record("ReluBackward", {a}, {out}, [so = SavedTensor(out)](const BackwardContext& c) {
      Tensor y = so.unpack(c.name());
      if (!y.is_floating_point()) return std::vector<Tensor>{where(gt(y, 0), c.grad(0), 0)};
      return std::vector<Tensor>{relu_backward(c.grad(0), y)};
    });
  }
  return out;
}

Tensor sigmoid(const Tensor& a) {
  static OpHandle op = detail::op_handle(OpId::sigmoid);
  detail::check_defined("sigmoid", a, "input");
  Tensor out = detail::unary_forward(op, a, detail::float_op_dtype(a.dtype()));
  if (autograd::any_requires_grad({a})) {
    autograd::record("SigmoidBackward", {a}, {out}, [so = SavedTensor(out)](const BackwardContext& c) {
      Tensor y = so.unpack(c.name());
      return std::vector<Tensor>{mul(c.grad(0), mul(y, rsub(y, 1)))};
    });
  }
  return out;
}

Tensor tanh(const Tensor& a) {
  static OpHandle op = detail::op_handle(OpId::tanh);
  detail::check_defined("tanh", a, "input");
  Tensor out = detail::unary_forward(op, a, detail::float_op_dtype(a.dtype()));
  if (autograd::any_requires_grad({a})) {
    autograd::record("TanhBackward", {a}, {out}, [so = SavedTensor(out)](const BackwardContext& c) {
      return std::vector<Tensor>{mul(c.grad(0), rsub(square(so.unpack(c.name())), 1))};
    });
  }
  return out;
}

Tensor silu(const Tensor& a) {
  static OpHandle op = detail::op_handle(OpId::silu);
  detail::check_floating("silu", a, "input");
  Tensor out = detail::unary_forward(op, a, a.dtype());
  if (autograd::any_requires_grad({a})) {
    // d x s(x) = s(x) (1 + x (1 - s(x)))
    autograd::record("SiluBackward", {a}, {out}, [sa = SavedTensor(a)](const BackwardContext& c) {
      Tensor x = sa.unpack(c.name());
      Tensor s = sigmoid(x);
      return std::vector<Tensor>{mul(c.grad(0), mul(s, add(mul(x, rsub(s, 1)), 1)))};
    });
  }
  return out;
}

Tensor gelu(const Tensor& a, const std::string& approximate) {
  static OpHandle op = detail::op_handle(OpId::gelu);
  static OpHandle backward_op = detail::op_handle(OpId::gelu_backward);
  detail::check_floating("gelu", a, "input");
  HEARTH_CHECK(approximate == "none" || approximate == "tanh", ValueError,
               "[gelu] approximate must be \"none\" or \"tanh\", got \"", approximate, "\"");
  const GeluAttrs attrs{approximate == "tanh"};
  Tensor out = detail::unary_forward(op, a, a.dtype(), attrs);
  if (autograd::any_requires_grad({a})) {
    autograd::record("GeluBackward", {a}, {out}, [sa = SavedTensor(a), attrs](const BackwardContext& c) {
      Tensor x = sa.unpack(c.name());
      Tensor g = c.grad(0);
      Tensor gx = detail::empty_like_inputs(x.shape(), x.dtype(), x.device(), {x});
      if (gx.numel() > 0) detail::run(backward_op, {g.dtype() == x.dtype() ? g : cast(g, x.dtype()), x}, {gx}, attrs);
      return std::vector<Tensor>{gx};
    });
  }
  return out;
}

Tensor Tensor::relu() const { return hearth::relu(*this); }

}  // namespace hearth
