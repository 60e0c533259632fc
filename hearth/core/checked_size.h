// The one check every storage size goes through before it allocates.
#pragma once

#include <cstddef>

#include "hearth/core/shape.h"

namespace hearth {

// Bytes of a dense tensor of `shape` with elements of `element_size` bytes.
// Negative dims, and a product of dims or a byte count beyond int64 (sizes
// read from a hostile file must not wrap), throw ShapeError naming the shape.
size_t checked_nbytes(const Shape& shape, size_t element_size);

}  // namespace hearth
