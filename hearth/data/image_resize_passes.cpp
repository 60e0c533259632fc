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

void resize_contiguous(const Tensor& x, const ResizePlan& plan, int64_t out_height, int64_t out_width, Tensor& out) {
  if (out.numel() == 0) return;
  if (x.dtype() == DType::uint8) {
    const int64_t w = x.size(1), channels = x.size(2);
    if (channels == 3)
      resize_interleaved<3>(x.data<uint8_t>(), w * channels, plan, out_height, out_width, out.data<float>());
    else
      resize_planes(PlaneLayout<uint8_t>{x.data<uint8_t>(), 1, w * channels, channels}, channels, plan, out_height,
                    out_width, out.data<float>());
    return;
  }
  const int64_t h = x.size(-2), w = x.size(-1);
  const int64_t planes = h * w == 0 ? 0 : x.numel() / (h * w);
  if (planes > 0)
    resize_planes(PlaneLayout<float>{x.data<float>(), h * w, w, 1}, planes, plan, out_height, out_width,
                  out.data<float>());
}

const bool kInstalled = [] {
  if (cpu_level() == CpuLevel::HEARTH_CPU_KERNEL_LEVEL) selected_resize_passes() = &resize_contiguous;
  return true;
}();

}  // namespace
}  // namespace hearth::data
