// Shapes and strides (in elements), and the arithmetic on them every layer shares.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hearth {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

int64_t numel_of(const Shape& shape);
Strides contiguous_strides(const Shape& shape);
// "[2, 3, 4]"
std::string shape_str(const Shape& shape);
// Wraps a possibly negative dim into [0, ndim); throws naming `op` if out of range.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);
// NumPy/PyTorch broadcasting of two shapes; throws ShapeError naming `op`.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// Whether `strides` describe a row-major dense layout of `shape`.
bool is_contiguous_layout(const Shape& shape, const Strides& strides);

}  // namespace hearth
