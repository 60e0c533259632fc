// Runs the recorded graph backwards from one or more roots.
#pragma once

#include <cstdint>
#include <vector>

#include "hearth/core/tensor.h"

namespace hearth::autograd {

// grad_roots[i] is the gradient of roots[i] (must be given; Tensor::backward
// fills ones for scalars). Gradients reach leaves' .grad.
void run_backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots, bool retain_graph);

// Whether the engine hands a tensor's partial gradient sum to the node whose
// formula produces the next contribution, where that node can add into it
// (Node::can_accumulate_input_grad: convolution backward-data, linear's input
// gradient), instead of adding the two afterwards. On unless
// set_fused_grad_accumulation_enabled(false) (tests compare both paths in one process).
bool fused_grad_accumulation_enabled();
void set_fused_grad_accumulation_enabled(bool on);

// How many partial sums formulas have taken over since the process started
// (for tests and measurements: whether the fused path ran at all).
uint64_t fused_grad_accumulation_count();

// How many gradients formulas have written straight into a destination a
// leaf offered through a cast since the process started (Node::
// gradient_destination: linear's weight and bias gradients computed in
// float32 into a float32 parameter's .grad under autocast, instead of in the
// half type and widened by a copy). For tests and measurements.
uint64_t gradient_destinations_written();

}  // namespace hearth::autograd
