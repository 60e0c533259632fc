#include "hearth/data/image_transforms.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "hearth/core/errors.h"
#include "hearth/data/encoded_image.h"

namespace hearth::data {
namespace {

// Python's round() of k / 2 for an integer k: halves go to the even neighbour.
int64_t round_half_even_div2(int64_t k) {
  int64_t q = k >= 0 ? k / 2 : -((-k + 1) / 2);  // floor(k / 2)
  if (k % 2 == 0) return q;
  return q % 2 == 0 ? q : q + 1;
}

// Floor division, as Python's //.
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

// ---- ToTensor ---------------------------------------------------------------------

Tensor ToTensor::operator()(const Tensor& input, SampleRng&) const {
  HEARTH_CHECK(input.defined(), ValueError, "[ToTensor] got an undefined tensor");
  HEARTH_CHECK(input.device().is_cpu(), DeviceError, "[ToTensor] runs on CPU tensors, got one on ",
               input.device().str());
  HEARTH_CHECK(input.dtype() == DType::uint8, TypeError, "[ToTensor] expects a uint8 image, got ",
               dtype_name(input.dtype()));
  HEARTH_CHECK(input.dim() == 2 || input.dim() == 3, ShapeError,
               "[ToTensor] expects an image laid out [H, W, C] or [H, W], got shape ", input.shape_string());
  Tensor x = input.is_contiguous() ? input : input.detach().contiguous();
  const int64_t h = x.size(0), w = x.size(1), c = x.dim() == 3 ? x.size(2) : 1;
  Tensor out = Tensor::empty({c, h, w}, DType::float32);
  const uint8_t* src = x.data<uint8_t>();
  float* dst = out.data<float>();
  const int64_t plane = h * w;
  // A table of the 256 quotients, and one channel at a time so the writes are
  // sequential: several times faster than dividing pixel by pixel.
  static const std::array<float, 256> kScaled = [] {
    std::array<float, 256> t{};
    for (int v = 0; v < 256; ++v) t[static_cast<size_t>(v)] = static_cast<float>(v) / 255.0f;
    return t;
  }();
  for (int64_t k = 0; k < c; ++k) {
    float* out_plane = dst + k * plane;
    const uint8_t* in = src + k;
    for (int64_t i = 0; i < plane; ++i) out_plane[i] = kScaled[in[i * c]];
  }
  return out;
}

// ---- Resize -------------------------------------------------------------------------

Resize::Resize(int64_t size) : size_(size) {
  HEARTH_CHECK(size >= 1, ValueError, "[Resize] size must be >= 1, got ", size);
}

Resize::Resize(int64_t height, int64_t width) : height_(height), width_(width) {
  HEARTH_CHECK(height >= 1 && width >= 1, ValueError, "[Resize] size must be positive, got ", height, "x", width);
}

std::pair<int64_t, int64_t> Resize::output_size(int64_t h, int64_t w) const {
  if (size_ == 0) return {height_, width_};
  if (h <= w) return {size_, static_cast<int64_t>(static_cast<double>(size_) * w / h)};
  return {static_cast<int64_t>(static_cast<double>(size_) * h / w), size_};
}

Tensor Resize::operator()(const Tensor& x, SampleRng&) const {
  const auto [h, w] = image_size(x, "Resize");
  HEARTH_CHECK(h >= 1 && w >= 1, ShapeError, "[Resize] cannot resize an empty image of shape ", x.shape_string());
  auto [oh, ow] = output_size(h, w);
  // A float image already of that size stays as it is; a uint8 one still
  // becomes float pixels (the identity resize is exact).
  if (x.dtype() == DType::float32 && oh == h && ow == w) return x;
  return resize_bilinear(x, oh, ow);
}

Tensor Resize::from_encoded(const EncodedImage& image, SampleRng&) const {
  const auto [h, w] = image.size();
  const auto [oh, ow] = output_size(h, w);
  const DecodedRegion region = image.decode_region({CropBox{0, 0, h, w}, oh, ow});
  return resize_bilinear(region.pixels, region.box, oh, ow);
}

// ---- CenterCrop ---------------------------------------------------------------------

CenterCrop::CenterCrop(int64_t height, int64_t width) : height_(height), width_(width) {
  HEARTH_CHECK(height >= 1 && width >= 1, ValueError, "[CenterCrop] size must be positive, got ", height, "x", width);
}

std::pair<int64_t, int64_t> CenterCrop::offset(int64_t h, int64_t w) const {
  // torchvision pads a too-small side by (crop - size) // 2 before, the rest
  // after, then crops at round((size - crop) / 2), which is 0 there.
  int64_t top = h < height_ ? -floor_div(height_ - h, 2) : round_half_even_div2(h - height_);
  int64_t left = w < width_ ? -floor_div(width_ - w, 2) : round_half_even_div2(w - width_);
  return {top, left};
}

Tensor CenterCrop::operator()(const Tensor& input, SampleRng&) const {
  HEARTH_CHECK(input.defined() && input.dim() >= 2, ShapeError, "[CenterCrop] expects a tensor laid out [..., H, W]");
  Tensor x = input.is_contiguous() ? input : input.detach().contiguous();
  const int64_t h = x.size(-2), w = x.size(-1);
  auto [top, left] = offset(h, w);
  Shape shape = x.shape();
  shape[shape.size() - 2] = height_;
  shape[shape.size() - 1] = width_;
  Tensor out = Tensor::empty(shape, x.dtype());
  if (out.numel() == 0) return out;
  const int64_t elem = static_cast<int64_t>(x.element_size());
  const int64_t planes = out.numel() / (height_ * width_);
  const int64_t c0 = std::max<int64_t>(0, -left), c1 = std::min<int64_t>(width_, w - left);
  const char* src = static_cast<const char*>(x.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  std::memset(dst, 0, out.nbytes());
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t y = 0; y < height_; ++y) {
      const int64_t sy = top + y;
      if (sy < 0 || sy >= h || c1 <= c0) continue;
      std::memcpy(dst + ((p * height_ + y) * width_ + c0) * elem, src + ((p * h + sy) * w + left + c0) * elem,
                  static_cast<size_t>((c1 - c0) * elem));
    }
  }
  return out;
}

// ---- RandomResizedCrop -----------------------------------------------------------------

RandomResizedCrop::RandomResizedCrop(int64_t size, std::pair<double, double> scale, std::pair<double, double> ratio)
    : size_(size), scale_(scale), ratio_(ratio) {
  HEARTH_CHECK(size >= 1, ValueError, "[RandomResizedCrop] size must be >= 1, got ", size);
  HEARTH_CHECK(scale.first > 0 && scale.first <= scale.second, ValueError,
               "[RandomResizedCrop] scale must be (min, max) with 0 < min <= max, got (", scale.first, ", ",
               scale.second, ")");
  HEARTH_CHECK(ratio.first > 0 && ratio.first <= ratio.second, ValueError,
               "[RandomResizedCrop] ratio must be (min, max) with 0 < min <= max, got (", ratio.first, ", ",
               ratio.second, ")");
}

CropBox RandomResizedCrop::sample_box(int64_t h, int64_t w, SampleRng& rng) const {
  const double area = static_cast<double>(h) * static_cast<double>(w);
  const double log_lo = std::log(ratio_.first), log_hi = std::log(ratio_.second);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * (scale_.first + (scale_.second - scale_.first) * rng.uniform());
    const double aspect = std::exp(log_lo + (log_hi - log_lo) * rng.uniform());
    // nearbyint rounds halves to even, as Python's round().
    const auto cw = static_cast<int64_t>(std::nearbyint(std::sqrt(target * aspect)));
    const auto ch = static_cast<int64_t>(std::nearbyint(std::sqrt(target / aspect)));
    if (cw > 0 && cw <= w && ch > 0 && ch <= h) {
      const int64_t top = rng.randint(h - ch + 1);
      const int64_t left = rng.randint(w - cw + 1);
      return {top, left, ch, cw};
    }
  }
  const double in_ratio = static_cast<double>(w) / static_cast<double>(h);
  int64_t cw = w, ch = h;
  if (in_ratio < ratio_.first) {
    ch = std::min<int64_t>(h, static_cast<int64_t>(std::nearbyint(static_cast<double>(w) / ratio_.first)));
  } else if (in_ratio > ratio_.second) {
    cw = std::min<int64_t>(w, static_cast<int64_t>(std::nearbyint(static_cast<double>(h) * ratio_.second)));
  }
  ch = std::max<int64_t>(ch, 1);
  cw = std::max<int64_t>(cw, 1);
  return {(h - ch) / 2, (w - cw) / 2, ch, cw};
}

Tensor RandomResizedCrop::operator()(const Tensor& x, SampleRng& rng) const {
  const auto [h, w] = image_size(x, "RandomResizedCrop");
  HEARTH_CHECK(h >= 1 && w >= 1, ShapeError, "[RandomResizedCrop] cannot crop an empty image of shape ",
               x.shape_string());
  return resize_bilinear(x, sample_box(h, w, rng), size_, size_);
}

Tensor RandomResizedCrop::from_encoded(const EncodedImage& image, SampleRng& rng) const {
  const auto [h, w] = image.size();
  const DecodedRegion region = image.decode_region({sample_box(h, w, rng), size_, size_});
  return resize_bilinear(region.pixels, region.box, size_, size_);
}

}  // namespace hearth::data
