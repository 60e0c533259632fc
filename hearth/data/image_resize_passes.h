// Between hearth/data/image_resize.cpp (checks, shapes) and the arithmetic in
// image_resize_passes.cpp, which is compiled once per CPU level
// (hearth/core/cpu_level.h): the copy for the level in use sets the pointer.
#pragma once

#include <cstdint>

#include "hearth/data/image_resize.h"

namespace hearth::data {

// Resizes contiguous `x` (uint8 [H, W, C] or float32 [..., H, W]) within `box`
// into `out`, allocated by the caller as resize_bilinear describes.
using ResizePasses = void (*)(const Tensor& x, const CropBox& box, int64_t out_height, int64_t out_width, Tensor& out);
ResizePasses& selected_resize_passes();

}  // namespace hearth::data
