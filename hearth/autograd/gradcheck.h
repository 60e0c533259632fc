// Numerical gradient check (torch.autograd.gradcheck): compares the gradients
// autograd computes with central finite differences in float64. To keep it to
// one backward pass, it checks the scalar sum(f(x) * v) for a random v.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hearth/core/tensor.h"

namespace hearth {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};

struct GradcheckResult {
  bool ok = true;
  std::string message;  // the first mismatch: input, element, analytic vs numeric
};

// `inputs` must be float64 CPU tensors; those with requires_grad are checked.
// They may be non-contiguous views. `fn` must be deterministic.
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& fn,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& options = {});

}  // namespace hearth
