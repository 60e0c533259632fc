#include "hearth/nn/flatten.h"

#include "hearth/ops/view.h"

namespace hearth::nn {

Tensor Flatten::forward(const Tensor& x) { return flatten(x, start_dim, end_dim); }

std::string Flatten::extra_repr() const {
  return "start_dim=" + std::to_string(start_dim) + ", end_dim=" + std::to_string(end_dim);
}

}  // namespace hearth::nn
