// Comparison of tensors across devices, for tests that hold one device's
// results against another's (the parity harness, the GPU tests).
#pragma once

#include "hearth/core/tensor.h"

namespace hearth::testing {

// ||a - b|| / max(||b||, tiny), computed in float64 on the CPU; infinite when
// the sizes, NaNs or infinities differ.
double relative_error(const Tensor& a, const Tensor& b);
double max_abs_diff(const Tensor& a, const Tensor& b);

}  // namespace hearth::testing
