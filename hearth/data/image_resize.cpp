#include "hearth/data/image_resize.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "hearth/core/errors.h"
#include "hearth/data/image_resize_passes.h"

namespace hearth::data {

ResizePasses& selected_resize_passes() {
  static ResizePasses passes = nullptr;
  return passes;
}

namespace {

// Taps for an axis window of `window` input pixels, resizing the span
// [offset, offset + length) of it (in pixels, fractional when the image was
// decoded at a reduced scale) to `out_size` pixels. For a whole-pixel span
// offset is 0 and length the window, and every weight is the same double
// arithmetic as resizing that span cut out on its own.
Taps antialias_taps(int64_t window, double offset, double length, int64_t out_size) {
  const double scale = length / static_cast<double>(out_size);
  const double support = std::max(scale, 1.0);
  Taps t;
  t.width = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  t.first.resize(static_cast<size_t>(out_size));
  t.count.resize(static_cast<size_t>(out_size));
  t.weights.assign(static_cast<size_t>(out_size * t.width), 0.0f);
  std::vector<double> w(static_cast<size_t>(t.width));
  for (int64_t o = 0; o < out_size; ++o) {
    const double center = offset + (static_cast<double>(o) + 0.5) * scale;
    // Truncation toward zero, then clamping, as PIL computes the range.
    const int64_t lo = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    const int64_t hi = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), window);
    const int64_t n = std::max<int64_t>(std::min(hi - lo, t.width), 0);
    double total = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      double x = std::abs((static_cast<double>(lo + k) - center + 0.5) / support);
      w[static_cast<size_t>(k)] = x < 1.0 ? 1.0 - x : 0.0;
      total += w[static_cast<size_t>(k)];
    }
    t.first[static_cast<size_t>(o)] = lo;
    t.count[static_cast<size_t>(o)] = n;
    for (int64_t k = 0; k < n; ++k)
      t.weights[static_cast<size_t>(o * t.width + k)] =
          static_cast<float>(total > 0.0 ? w[static_cast<size_t>(k)] / total : 0.0);
  }
  return t;
}

ResizePlan plan_resize(const CropBox& box, int64_t out_height, int64_t out_width) {
  return {box, antialias_taps(box.width, 0.0, static_cast<double>(box.width), out_width),
          antialias_taps(box.height, 0.0, static_cast<double>(box.height), out_height)};
}

ResizePlan plan_resize(const SubpixelBox& box, int64_t out_height, int64_t out_width) {
  CropBox window;
  window.top = static_cast<int64_t>(std::floor(box.top));
  window.left = static_cast<int64_t>(std::floor(box.left));
  window.height = static_cast<int64_t>(std::ceil(box.top + box.height)) - window.top;
  window.width = static_cast<int64_t>(std::ceil(box.left + box.width)) - window.left;
  return {window, antialias_taps(window.width, box.left - static_cast<double>(window.left), box.width, out_width),
          antialias_taps(window.height, box.top - static_cast<double>(window.top), box.height, out_height)};
}

}  // namespace

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

namespace {

Tensor run_resize(const Tensor& input, const ResizePlan& plan, int64_t out_height, int64_t out_width) {
  Tensor x = input.is_contiguous() ? input : input.detach().contiguous();
  Shape shape = x.shape();
  if (x.dtype() == DType::uint8) {
    shape = {x.size(2), out_height, out_width};
  } else {
    shape[shape.size() - 2] = out_height;
    shape[shape.size() - 1] = out_width;
  }
  Tensor out = Tensor::empty(shape, DType::float32);
  selected_resize_passes()(x, plan, out_height, out_width, out);
  return out;
}

void check_output_size(int64_t out_height, int64_t out_width) {
  HEARTH_CHECK(out_height >= 1 && out_width >= 1, ValueError, "[resize] the output size must be positive, got ",
               out_height, "x", out_width);
}

}  // namespace

Tensor resize_bilinear(const Tensor& input, const CropBox& box, int64_t out_height, int64_t out_width) {
  const auto [h, w] = image_size(input, "resize");
  check_output_size(out_height, out_width);
  HEARTH_CHECK(box.height >= 1 && box.width >= 1 && box.top >= 0 && box.left >= 0 && box.top + box.height <= h &&
                   box.left + box.width <= w,
               ValueError, "[resize] the box (top ", box.top, ", left ", box.left, ", ", box.height, "x", box.width,
               ") must lie inside the ", h, "x", w, " image");
  return run_resize(input, plan_resize(box, out_height, out_width), out_height, out_width);
}

Tensor resize_bilinear(const Tensor& input, const SubpixelBox& box, int64_t out_height, int64_t out_width) {
  const auto [h, w] = image_size(input, "resize");
  check_output_size(out_height, out_width);
  const auto inside = [](double start, double length, int64_t size) {
    return std::isfinite(start) && std::isfinite(length) && start >= 0.0 && length > 0.0 &&
           start + length <= static_cast<double>(size);
  };
  HEARTH_CHECK(inside(box.top, box.height, h) && inside(box.left, box.width, w), ValueError, "[resize] the box (top ",
               box.top, ", left ", box.left, ", ", box.height, "x", box.width, ") must lie inside the ", h, "x", w,
               " image");
  return run_resize(input, plan_resize(box, out_height, out_width), out_height, out_width);
}

}  // namespace hearth::data
