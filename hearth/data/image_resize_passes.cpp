// The arithmetic of hearth/data/image_resize.cpp: compiled once per CPU level
// (cmake/cpu_dispatch.cmake); the copy built for the level in use installs
// itself at start-up.
#include "hearth/data/image_resize_passes.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "hearth/core/cpu_level.h"

#ifndef HEARTH_CPU_KERNEL_LEVEL
#error "this file is compiled once per CPU level: list it in HEARTH_CPU_LEVEL_SOURCES (cmake/cpu_dispatch.cmake)"
#endif

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
void resize_planes(const PlaneLayout<T>& src, int64_t planes, const CropBox& box, int64_t out_height, int64_t out_width,
                   float* dst) {
  const Taps tx = antialias_taps(box.width, out_width);
  const Taps ty = antialias_taps(box.height, out_height);
  // The horizontal pass over the box's rows, then the vertical pass.
  std::vector<float> rows(static_cast<size_t>(box.height * out_width));
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t y = 0; y < box.height; ++y) {
      const T* in_row = src.base + p * src.plane + (box.top + y) * src.row + box.left * src.pixel;
      float* out_row = rows.data() + y * out_width;
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
        const float* in_row = rows.data() + (ty.first[static_cast<size_t>(o)] + k) * out_width;
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
void resize_interleaved(const uint8_t* base, int64_t row_stride, const CropBox& box, int64_t out_height,
                        int64_t out_width, float* dst) {
  const Taps tx = antialias_taps(box.width, out_width);
  const Taps ty = antialias_taps(box.height, out_height);
  const int64_t row_len = out_width * C;
  std::vector<float> rows(static_cast<size_t>(box.height * row_len));
  for (int64_t y = 0; y < box.height; ++y) {
    const uint8_t* in_row = base + (box.top + y) * row_stride + box.left * C;
    float* out_row = rows.data() + y * row_len;
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
      const float* in_row = rows.data() + (ty.first[static_cast<size_t>(o)] + k) * row_len;
      const float wk = wt[k];
      for (int64_t j = 0; j < row_len; ++j) line[static_cast<size_t>(j)] += wk * in_row[j];
    }
    for (int64_t col = 0; col < out_width; ++col)
      for (int c = 0; c < C; ++c) dst[(c * out_height + o) * out_width + col] = line[static_cast<size_t>(col * C + c)];
  }
}


void resize_contiguous(const Tensor& x, const CropBox& box, int64_t out_height, int64_t out_width, Tensor& out) {
  if (out.numel() == 0) return;
  if (x.dtype() == DType::uint8) {
    const int64_t w = x.size(1), channels = x.size(2);
    if (channels == 3)
      resize_interleaved<3>(x.data<uint8_t>(), w * channels, box, out_height, out_width, out.data<float>());
    else
      resize_planes(PlaneLayout<uint8_t>{x.data<uint8_t>(), 1, w * channels, channels}, channels, box, out_height,
                    out_width, out.data<float>());
    return;
  }
  const int64_t h = x.size(-2), w = x.size(-1);
  const int64_t planes = h * w == 0 ? 0 : x.numel() / (h * w);
  if (planes > 0)
    resize_planes(PlaneLayout<float>{x.data<float>(), h * w, w, 1}, planes, box, out_height, out_width,
                  out.data<float>());
}

const bool kInstalled = [] {
  if (cpu_level() == CpuLevel::HEARTH_CPU_KERNEL_LEVEL) selected_resize_passes() = &resize_contiguous;
  return true;
}();

}  // namespace
}  // namespace hearth::data
