// Bilinear resizing with antialiasing, as PIL's Image.resize(BILINEAR) and
// torchvision's resize(antialias=True) do it.
//
// Separable: a horizontal pass, then a vertical one. Output pixel o of an axis
// of `in` pixels resized to `out` is centred at (o + 0.5) * in / out; it
// averages the input pixels whose centres lie within `support` of it with the
// triangle filter, stretched by the downscale factor:
//   scale = in / out, support = max(scale, 1), weight(x) = max(0, 1 - |x| / support)
// normalised over the taps that fall inside the image. Upscaling is therefore
// plain bilinear interpolation with half-pixel centres; downscaling averages
// every input pixel, so thin lines do not vanish and no aliasing appears.
// Arithmetic is in float; PIL rounds to 8 bits after each pass, so results
// agree with PIL's to within one 8-bit step (tests/unit/data/test_image_resize.cpp).
#pragma once

#include <cstdint>

#include "hearth/core/tensor.h"

namespace hearth::data {

// A window of an image: rows [top, top + height), columns [left, left + width).
struct CropBox {
  int64_t top = 0, left = 0, height = 0, width = 0;
};

// A window whose edges may fall between pixels: a box of whole pixels of a
// full-size image, mapped onto the same image decoded at a reduced scale
// (hearth/data/encoded_image.h). Only the pixels it covers, wholly or in
// part, are read.
struct SubpixelBox {
  double top = 0, left = 0, height = 0, width = 0;
};

// The height and width of an image: a decoded uint8 [H, W, C] image, or
// float32 pixels [..., H, W]. Anything else is an error naming `who`.
struct ImageSize {
  int64_t height = 0, width = 0;
};
ImageSize image_size(const Tensor& x, const char* who);

// Resizes each [H, W] plane of float32 pixels [..., H, W] to
// [..., out_height, out_width]. A decoded uint8 image [H, W, C] is read as it
// is and comes out as float32 [C, out_height, out_width] scaled to [0, 1],
// what ToTensor followed by the resize gives, without converting the whole
// image first. With `box`, only that window (which must lie inside the image)
// is resized: pixels outside it do not contribute, as when cropping first.
Tensor resize_bilinear(const Tensor& x, int64_t out_height, int64_t out_width);
Tensor resize_bilinear(const Tensor& x, const CropBox& box, int64_t out_height, int64_t out_width);
// The same with a window of fractional edges: output pixel o of an axis is
// centred at start + (o + 0.5) * length / out. A box of whole pixels gives
// exactly what the CropBox overload gives.
Tensor resize_bilinear(const Tensor& x, const SubpixelBox& box, int64_t out_height, int64_t out_width);

}  // namespace hearth::data
