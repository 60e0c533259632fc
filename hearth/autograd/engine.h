// Runs the recorded graph backwards from one or more roots.
#pragma once

#include <vector>

#include "hearth/core/tensor.h"

namespace hearth::autograd {

// grad_roots[i] is the gradient of roots[i] (must be given; Tensor::backward
// fills ones for scalars). Gradients reach leaves' .grad.
void run_backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots, bool retain_graph);

}  // namespace hearth::autograd
