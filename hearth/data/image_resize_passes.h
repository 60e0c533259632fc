// Between hearth/data/image_resize.cpp (checks, shapes, the filter taps) and
// the arithmetic in image_resize_passes.cpp, which is compiled once per CPU
// level (hearth/core/cpu_level.h): the copy for the level in use sets the pointer.
#pragma once

#include <cstdint>
#include <vector>

#include "hearth/data/image_resize.h"

namespace hearth::data {

// For each output pixel: the first input pixel it reads and its weights.
struct Taps {
  int64_t width = 0;  // weights per output pixel (unused ones are 0)
  std::vector<int64_t> first;
  std::vector<int64_t> count;
  std::vector<float> weights;  // [out, width]
};

// The whole pixels a resize reads (`window`) and its taps along each axis.
struct ResizePlan {
  CropBox window;
  Taps tx, ty;
};

// Resizes contiguous `x` (uint8 [H, W, C] or float32 [..., H, W]) by `plan`
// into `out`, allocated by the caller as resize_bilinear describes.
using ResizePasses = void (*)(const Tensor& x, const ResizePlan& plan, int64_t out_height, int64_t out_width,
                              Tensor& out);
ResizePasses& selected_resize_passes();

}  // namespace hearth::data
