#include "hearth/data/image_plan.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "hearth/core/errors.h"
#include "hearth/data/transforms.h"

namespace hearth::data {

ImagePlan ImagePlan::for_image(int64_t height, int64_t width) {
  ImagePlan p;
  p.image_height = height;
  p.image_width = width;
  p.box = {0, 0, height, width};
  p.resized_height = p.out_height = height;
  p.resized_width = p.out_width = width;
  return p;
}

ImageResampling ImagePlan::resampling() const {
  ImageResampling r;
  r.box_top = static_cast<double>(box.top);
  r.box_left = static_cast<double>(box.left);
  r.box_height = static_cast<double>(box.height);
  r.box_width = static_cast<double>(box.width);
  r.resized_height = resized_height;
  r.resized_width = resized_width;
  r.window_top = window_top;
  r.window_left = window_left;
  r.flip = flip;
  return r;
}

namespace {

// Rows [top, top + out_h) and columns [left, + out_w) of float [C, H, W],
// zeros where they leave it: CenterCrop's cut, at any corner.
Tensor cut_window(const Tensor& x, int64_t top, int64_t left, int64_t out_h, int64_t out_w) {
  const int64_t c = x.size(0), h = x.size(1), w = x.size(2);
  if (top == 0 && left == 0 && out_h == h && out_w == w) return x;
  Tensor out = Tensor::empty({c, out_h, out_w}, DType::float32);
  std::memset(out.data_ptr(), 0, out.nbytes());
  const float* src = x.data<float>();
  float* dst = out.data<float>();
  const int64_t c0 = std::max<int64_t>(0, -left), c1 = std::min<int64_t>(out_w, w - left);
  for (int64_t p = 0; p < c; ++p)
    for (int64_t y = 0; y < out_h; ++y) {
      const int64_t sy = top + y;
      if (sy < 0 || sy >= h || c1 <= c0) continue;
      std::memcpy(dst + (p * out_h + y) * out_w + c0, src + (p * h + sy) * w + left + c0,
                  static_cast<size_t>(c1 - c0) * sizeof(float));
    }
  return out;
}

}  // namespace

Tensor apply_image_plan(const Tensor& decoded, const ImagePlan& plan) {
  HEARTH_CHECK(decoded.dtype() == DType::uint8 && decoded.dim() == 3 && decoded.size(2) == 3, ShapeError,
               "[image plan] expects a decoded uint8 image [H, W, 3], got ", dtype_name(decoded.dtype()), " ",
               decoded.shape_string());
  HEARTH_CHECK(decoded.size(0) == plan.image_height && decoded.size(1) == plan.image_width, ShapeError,
               "[image plan] the plan is for a ", plan.image_height, "x", plan.image_width, " image, got ",
               decoded.size(0), "x", decoded.size(1));
  Tensor x = resize_bilinear(decoded, plan.box, plan.resized_height, plan.resized_width);
  x = cut_window(x, plan.window_top, plan.window_left, plan.out_height, plan.out_width);
  // The CPU path's own transforms, so the arithmetic is theirs.
  SampleRng unused(0, 0, 0);
  if (plan.flip) x = RandomHorizontalFlip(1.0)(x, unused);
  if (plan.normalized)
    x = Normalize({plan.mean.begin(), plan.mean.end()}, {plan.std.begin(), plan.std.end()})(x, unused);
  return x;
}

ImageBatchFormat image_batch_format(const ImagePlan& plan, DType dtype, MemoryFormat memory_format) {
  ImageBatchFormat f;
  f.height = plan.out_height;
  f.width = plan.out_width;
  for (size_t c = 0; c < 3; ++c) {
    // As Normalize computes them: the mean cast, the reciprocal taken in double.
    f.mean[c] = static_cast<float>(plan.mean[c]);
    f.inv_std[c] = static_cast<float>(1.0 / plan.std[c]);
  }
  f.dtype = dtype;
  f.memory_format = memory_format;
  return f;
}

}  // namespace hearth::data
