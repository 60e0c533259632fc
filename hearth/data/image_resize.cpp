#include "hearth/data/image_resize.h"

#include "hearth/core/errors.h"
#include "hearth/data/image_resize_passes.h"

namespace hearth::data {

ResizePasses& selected_resize_passes() {
  static ResizePasses passes = nullptr;
  return passes;
}

ImageSize image_size(const Tensor& x, const char* who) {
  HEARTH_CHECK(x.defined(), ValueError, "[", who, "] got an undefined tensor");
  HEARTH_CHECK(x.device().is_cpu(), DeviceError, "[", who, "] runs on CPU tensors, got one on ", x.device().str());
  if (x.dtype() == DType::uint8) {
    HEARTH_CHECK(x.dim() == 3, ShapeError, "[", who, "] expects a uint8 image laid out [H, W, C], got shape ",
                 x.shape_string());
    return {x.size(0), x.size(1)};
  }
  HEARTH_CHECK(x.dtype() == DType::float32, TypeError, "[", who,
               "] expects a uint8 [H, W, C] image or float32 [..., C, H, W] pixels, got ", dtype_name(x.dtype()));
  HEARTH_CHECK(x.dim() >= 2, ShapeError, "[", who, "] expects float32 pixels laid out [..., H, W], got shape ",
               x.shape_string());
  return {x.size(-2), x.size(-1)};
}

Tensor resize_bilinear(const Tensor& x, int64_t out_height, int64_t out_width) {
  ImageSize size = image_size(x, "resize");
  return resize_bilinear(x, CropBox{0, 0, size.height, size.width}, out_height, out_width);
}

Tensor resize_bilinear(const Tensor& input, const CropBox& box, int64_t out_height, int64_t out_width) {
  const auto [h, w] = image_size(input, "resize");
  HEARTH_CHECK(out_height >= 1 && out_width >= 1, ValueError, "[resize] the output size must be positive, got ",
               out_height, "x", out_width);
  HEARTH_CHECK(box.height >= 1 && box.width >= 1 && box.top >= 0 && box.left >= 0 && box.top + box.height <= h &&
                   box.left + box.width <= w,
               ValueError, "[resize] the box (top ", box.top, ", left ", box.left, ", ", box.height, "x", box.width,
               ") must lie inside the ", h, "x", w, " image");
  Tensor x = input.is_contiguous() ? input : input.detach().contiguous();
  Shape shape = x.shape();
  if (x.dtype() == DType::uint8) {
    shape = {x.size(2), out_height, out_width};
  } else {
    shape[shape.size() - 2] = out_height;
    shape[shape.size() - 1] = out_width;
  }
  Tensor out = Tensor::empty(shape, DType::float32);
  selected_resize_passes()(x, box, out_height, out_width, out);
  return out;
}

}  // namespace hearth::data
