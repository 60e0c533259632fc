// PyTorch's result_type: dimensioned tensors decide the dtype; zero-dim tensors
// and scalars only raise it when they are of a higher category (bool < integral
// < floating).
#pragma once

#include <vector>

#include "hearth/core/tensor.h"

namespace hearth {

DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, const Scalar& b);
DType result_type(const std::vector<Tensor>& tensors);

}  // namespace hearth
