// Activations as backends see them. Inputs may be strided views (outputs are
// allocated by the ops layer):
//   relu                   inputs {a} outputs {out}; same dtype, all but bool
//   sigmoid tanh silu      inputs {a} outputs {out}; same dtype, floating only (the
//                          ops layer casts integers to float32 first)
//   gelu                   inputs {a} outputs {out}   GeluAttrs; floating only
//   gelu_backward  inputs {grad, x} outputs {grad_x}   GeluAttrs; all one floating dtype, same shape
//   relu_backward  inputs {grad, y} outputs {grad_x}: grad_x = y > 0 ? grad : 0, where y = relu(x);
//                  one floating dtype, same shape (one pass instead of a compare and a select)
#pragma once

namespace hearth {

struct GeluAttrs {
  bool tanh_approximation = false;  // false: x * Phi(x) with erf
};

}  // namespace hearth
