// Softmax and log-softmax as backends see them.
// The functional layer (hearth/ops) reshapes and makes inputs contiguous, so every
// kernel below works on dense row-major buffers of the shapes given here. An
// undefined tensor marks an absent optional input, or an output not wanted.
// T is the input's floating dtype.
//
//   softmax, log_softmax  inputs {x [outer, D, inner]} outputs {y [outer, D, inner]}: along D.
//   softmax_backward      inputs {grad_y, y} outputs {grad_x}: grad_x = y * (grad_y - sum_D(grad_y * y))
//   log_softmax_backward  inputs {grad_y, y} outputs {grad_x}: grad_x = grad_y - exp(y) * sum_D(grad_y)
// No attributes.
#pragma once
