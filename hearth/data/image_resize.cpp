#include "hearth/data/image_resize.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "hearth/core/errors.h"

namespace hearth::data {
namespace {

// For each output pixel: the first input pixel it reads and its weights.
struct Taps {
  int64_t width = 0;  // weights per output pixel (unused ones are 0)
  std::vector<int64_t> first;
  std::vector<int64_t> count;
  std::vector<float> weights;  // [out, width]
};

Taps antialias_taps(int64_t in_size, int64_t out_size) {
  const double scale = static_cast<double>(in_size) / static_cast<double>(out_size);
  const double support = std::max(scale, 1.0);
  Taps t;
  t.width = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  t.first.resize(static_cast<size_t>(out_size));
  t.count.resize(static_cast<size_t>(out_size));
  t.weights.assign(static_cast<size_t>(out_size * t.width), 0.0f);
  std::vector<double> w(static_cast<size_t>(t.width));
  for (int64_t o = 0; o < out_size; ++o) {
    const double center = (static_cast<double>(o) + 0.5) * scale;
    // Truncation toward zero, then clamping, as PIL computes the range.
    const int64_t lo = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
    const int64_t hi = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in_size);
    const int64_t n = std::min(hi - lo, t.width);
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

}  // namespace

Tensor resize_bilinear(const Tensor& x, int64_t out_height, int64_t out_width) {
  HEARTH_CHECK(x.defined() && x.dim() >= 2, ShapeError, "[resize] expects a tensor laid out [..., H, W], got ",
               x.defined() ? x.shape_string() : std::string("an undefined tensor"));
  return resize_bilinear(x, CropBox{0, 0, x.size(-2), x.size(-1)}, out_height, out_width);
}

Tensor resize_bilinear(const Tensor& input, const CropBox& box, int64_t out_height, int64_t out_width) {
  HEARTH_CHECK(input.defined() && input.dim() >= 2, ShapeError, "[resize] expects a tensor laid out [..., H, W], got ",
               input.defined() ? input.shape_string() : std::string("an undefined tensor"));
  HEARTH_CHECK(input.device().is_cpu(), DeviceError, "[resize] runs on CPU tensors, got one on ", input.device().str());
  HEARTH_CHECK(input.dtype() == DType::float32, TypeError, "[resize] expects float32 pixels, got ",
               dtype_name(input.dtype()), " (convert uint8 images with ToTensor first)");
  HEARTH_CHECK(out_height >= 1 && out_width >= 1, ValueError, "[resize] the output size must be positive, got ",
               out_height, "x", out_width);
  const int64_t h = input.size(-2), w = input.size(-1);
  HEARTH_CHECK(box.height >= 1 && box.width >= 1 && box.top >= 0 && box.left >= 0 && box.top + box.height <= h &&
                   box.left + box.width <= w,
               ValueError, "[resize] the box (top ", box.top, ", left ", box.left, ", ", box.height, "x", box.width,
               ") must lie inside the ", h, "x", w, " image");
  Tensor x = input.is_contiguous() ? input : input.detach().contiguous();
  Shape shape = x.shape();
  shape[shape.size() - 2] = out_height;
  shape[shape.size() - 1] = out_width;
  Tensor out = Tensor::empty(shape, DType::float32);
  const int64_t planes = h * w == 0 ? 0 : x.numel() / (h * w);
  if (planes == 0) return out;

  const Taps tx = antialias_taps(box.width, out_width);
  const Taps ty = antialias_taps(box.height, out_height);
  const float* src = x.data<float>();
  float* dst = out.data<float>();
  // The horizontal pass over the box's rows, then the vertical pass.
  std::vector<float> rows(static_cast<size_t>(box.height * out_width));
  for (int64_t p = 0; p < planes; ++p) {
    const float* plane = src + p * h * w;
    for (int64_t y = 0; y < box.height; ++y) {
      const float* in_row = plane + (box.top + y) * w + box.left;
      float* out_row = rows.data() + y * out_width;
      for (int64_t o = 0; o < out_width; ++o) {
        const float* wt = tx.weights.data() + o * tx.width;
        const float* px = in_row + tx.first[static_cast<size_t>(o)];
        float acc = 0.0f;
        for (int64_t k = 0; k < tx.count[static_cast<size_t>(o)]; ++k) acc += wt[k] * px[k];
        out_row[o] = acc;
      }
    }
    float* out_plane = dst + p * out_height * out_width;
    for (int64_t o = 0; o < out_height; ++o) {
      float* out_row = out_plane + o * out_width;
      std::fill(out_row, out_row + out_width, 0.0f);
      const float* wt = ty.weights.data() + o * ty.width;
      for (int64_t k = 0; k < ty.count[static_cast<size_t>(o)]; ++k) {
        const float* in_row = rows.data() + (ty.first[static_cast<size_t>(o)] + k) * out_width;
        const float wk = wt[k];
        for (int64_t c = 0; c < out_width; ++c) out_row[c] += wk * in_row[c];
      }
    }
  }
  return out;
}

}  // namespace hearth::data
