#include "hearth/data/image_resize.h"

#include <algorithm>
#include <array>
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

// The whole pixels a resize reads (`window`) and its taps along each axis.
struct ResizePlan {
  CropBox window;
  Taps tx, ty;
};

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

// The horizontal pass's output, kept per thread from one image to the next:
// up to a megabyte per image at ImageNet sizes, which, freed and taken anew
// every image, the C library maps and the kernel faults in each time.
// Beyond kMaxKeptScratch a call uses a buffer of its own.
constexpr size_t kMaxKeptScratch = size_t{16} << 20;

class Scratch {
 public:
  float* get(size_t count) {
    static thread_local std::vector<float> kept;
    std::vector<float>& buf = count * sizeof(float) <= kMaxKeptScratch ? kept : own_;
    if (buf.size() < count) buf.resize(count);
    return buf.data();
  }

 private:
  std::vector<float> own_;
};

// Where the pixels of plane p, row y, column x are: base[p * plane + y * row + x * pixel].
template <typename T>
struct PlaneLayout {
  const T* base;
  int64_t plane, row, pixel;
};

// What a stored value means: floats as they are, bytes as ToTensor scales them.
constexpr std::array<float, 256> kByteToUnit = [] {
  std::array<float, 256> t{};
  for (int i = 0; i < 256; ++i) t[static_cast<size_t>(i)] = static_cast<float>(i) / 255.0f;
  return t;
}();
inline float pixel_value(float v) { return v; }
inline float pixel_value(uint8_t v) { return kByteToUnit[v]; }

template <typename T>
void resize_planes(const PlaneLayout<T>& src, int64_t planes, const ResizePlan& plan, int64_t out_height,
                   int64_t out_width, float* dst) {
  const CropBox& box = plan.window;
  const Taps& tx = plan.tx;
  const Taps& ty = plan.ty;
  // The horizontal pass over the box's rows, then the vertical pass.
  Scratch scratch;
  float* rows = scratch.get(static_cast<size_t>(box.height * out_width));
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t y = 0; y < box.height; ++y) {
      const T* in_row = src.base + p * src.plane + (box.top + y) * src.row + box.left * src.pixel;
      float* out_row = rows + y * out_width;
      for (int64_t o = 0; o < out_width; ++o) {
        const float* wt = tx.weights.data() + o * tx.width;
        const T* px = in_row + tx.first[static_cast<size_t>(o)] * src.pixel;
        float acc = 0.0f;
        for (int64_t k = 0; k < tx.count[static_cast<size_t>(o)]; ++k) acc += wt[k] * pixel_value(px[k * src.pixel]);
        out_row[o] = acc;
      }
    }
    float* out_plane = dst + p * out_height * out_width;
    for (int64_t o = 0; o < out_height; ++o) {
      float* out_row = out_plane + o * out_width;
      std::fill(out_row, out_row + out_width, 0.0f);
      const float* wt = ty.weights.data() + o * ty.width;
      for (int64_t k = 0; k < ty.count[static_cast<size_t>(o)]; ++k) {
        const float* in_row = rows + (ty.first[static_cast<size_t>(o)] + k) * out_width;
        const float wk = wt[k];
        for (int64_t c = 0; c < out_width; ++c) out_row[c] += wk * in_row[c];
      }
    }
  }
}

// The same passes for an interleaved 8-bit image of C channels ([H, W, C],
// as decoded), all channels at once: each input pixel's bytes are read
// together and the vertical pass runs over whole interleaved rows. Every
// output value is the same sum, in the same order, as resize_planes computes
// channel by channel, at about a third of the cost.
template <int C>
void resize_interleaved(const uint8_t* base, int64_t row_stride, const ResizePlan& plan, int64_t out_height,
                        int64_t out_width, float* dst) {
  const CropBox& box = plan.window;
  const Taps& tx = plan.tx;
  const Taps& ty = plan.ty;
  const int64_t row_len = out_width * C;
  Scratch scratch;
  float* rows = scratch.get(static_cast<size_t>(box.height * row_len));
  for (int64_t y = 0; y < box.height; ++y) {
    const uint8_t* in_row = base + (box.top + y) * row_stride + box.left * C;
    float* out_row = rows + y * row_len;
    for (int64_t o = 0; o < out_width; ++o) {
      const float* wt = tx.weights.data() + o * tx.width;
      const uint8_t* px = in_row + tx.first[static_cast<size_t>(o)] * C;
      float acc[C] = {};
      for (int64_t k = 0; k < tx.count[static_cast<size_t>(o)]; ++k)
        for (int c = 0; c < C; ++c) acc[c] += wt[k] * pixel_value(px[k * C + c]);
      for (int c = 0; c < C; ++c) out_row[o * C + c] = acc[c];
    }
  }
  std::vector<float> line(static_cast<size_t>(row_len));
  for (int64_t o = 0; o < out_height; ++o) {
    std::fill(line.begin(), line.end(), 0.0f);
    const float* wt = ty.weights.data() + o * ty.width;
    for (int64_t k = 0; k < ty.count[static_cast<size_t>(o)]; ++k) {
      const float* in_row = rows + (ty.first[static_cast<size_t>(o)] + k) * row_len;
      const float wk = wt[k];
      for (int64_t j = 0; j < row_len; ++j) line[static_cast<size_t>(j)] += wk * in_row[j];
    }
    for (int64_t col = 0; col < out_width; ++col)
      for (int c = 0; c < C; ++c) dst[(c * out_height + o) * out_width + col] = line[static_cast<size_t>(col * C + c)];
  }
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
  const int64_t h = input.dtype() == DType::uint8 ? input.size(0) : input.size(-2);
  const int64_t w = input.dtype() == DType::uint8 ? input.size(1) : input.size(-1);
  Tensor x = input.is_contiguous() ? input : input.detach().contiguous();
  if (x.dtype() == DType::uint8) {
    const int64_t channels = x.size(2);
    Tensor out = Tensor::empty({channels, out_height, out_width}, DType::float32);
    if (out.numel() > 0 && channels == 3)
      resize_interleaved<3>(x.data<uint8_t>(), w * channels, plan, out_height, out_width, out.data<float>());
    else if (out.numel() > 0)
      resize_planes(PlaneLayout<uint8_t>{x.data<uint8_t>(), 1, w * channels, channels}, channels, plan, out_height,
                    out_width, out.data<float>());
    return out;
  }
  Shape shape = x.shape();
  shape[shape.size() - 2] = out_height;
  shape[shape.size() - 1] = out_width;
  Tensor out = Tensor::empty(shape, DType::float32);
  const int64_t planes = h * w == 0 ? 0 : x.numel() / (h * w);
  if (planes > 0)
    resize_planes(PlaneLayout<float>{x.data<float>(), h * w, w, 1}, planes, plan, out_height, out_width,
                  out.data<float>());
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
