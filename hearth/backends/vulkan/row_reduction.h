// The host side of shaders/reduce_rows.comp, shared by the reduce_sum and
// reduce_minmax families: x [outer, inner] dense, one result per row.
#pragma once

#include "hearth/core/tensor.h"

namespace hearth::vulkan {

enum class RowReduction { sum = 0, amax = 1, amin = 2, max_dim = 3, min_dim = 4, norm = 5 };

// `indices` only for max_dim and min_dim; `p` only for norm. float32, float64
// (on devices with shaderFloat64) or int64 x.
void run_row_reduction(RowReduction op, const Tensor& x, const Tensor& values, const Tensor& indices, double p = 0);

}  // namespace hearth::vulkan
