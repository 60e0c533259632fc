#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>

#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/image/image_resample.h"

namespace hearth::cuda {
namespace {

// The taps of output pixel `o` along one axis: the box [start, start +
// length) of the decoded image resized to `out_size` pixels. The arithmetic
// of antialias_taps (hearth/data/image_resize.cpp), in double as there: the
// window of whole pixels the box touches, the triangle filter stretched by
// the downscale factor, truncation then clamping for the range.
struct AxisTaps {
  long long first = 0;  // first input pixel read (in the decoded image)
  int count = 0;
  double center = 0, support = 1, total = 0;
  long long window_first = 0;  // `first` relative to the window, as the weights need it
};

__device__ inline double triangle(long long k, const AxisTaps& t) {
  const double x = fabs((static_cast<double>(k) - t.center + 0.5) / t.support);
  return x < 1.0 ? 1.0 - x : 0.0;
}

__device__ AxisTaps axis_taps(double start, double length, int out_size, int o) {
  AxisTaps t;
  const double scale = length / static_cast<double>(out_size);
  t.support = fmax(scale, 1.0);
  const long long window0 = static_cast<long long>(floor(start));
  const long long window = static_cast<long long>(ceil(start + length)) - window0;
  t.center = (start - static_cast<double>(window0)) + (static_cast<double>(o) + 0.5) * scale;
  const long long lo = max(static_cast<long long>(t.center - t.support + 0.5), 0LL);
  const long long hi = min(static_cast<long long>(t.center + t.support + 0.5), window);
  const long long width = static_cast<long long>(ceil(t.support)) * 2 + 1;
  t.count = static_cast<int>(max(min(hi - lo, width), 0LL));
  t.window_first = lo;
  t.first = window0 + lo;
  for (int k = 0; k < t.count; ++k) t.total += triangle(lo + k, t);
  return t;
}

// Tap k's weight, normalised over the taps, rounded to float as the CPU
// path stores its weights.
__device__ inline float tap_weight(const AxisTaps& t, int k) {
  return static_cast<float>(t.total > 0.0 ? triangle(t.window_first + k, t) / t.total : 0.0);
}

struct BatchLayout {
  int height, width;
  float mean[3], inv_std[3];
  bool bf16, channels_last;
};

__device__ inline void store(void* out, const BatchLayout& f, long long n, int c, int y, int x, float v) {
  const long long h = f.height, w = f.width;
  const long long i = f.channels_last ? ((n * h + y) * w + x) * 3 + c : ((n * 3 + c) * h + y) * w + x;
  if (f.bf16)
    static_cast<__nv_bfloat16*>(out)[i] = __float2bfloat16_rn(v);
  else
    static_cast<float*>(out)[i] = v;
}

// One thread per output pixel (all three channels); blocks of 32x8 pixels,
// blockIdx.z the image.
__global__ void resample_batch_kernel(const ResampleSource* sources, BatchLayout f, void* out) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  const long long n = blockIdx.z;
  if (x >= f.width || y >= f.height) return;
  const ResampleSource& s = sources[n];
  if (s.pixels == nullptr) {
    // Made on the host by the CPU path: finished already.
    const long long plane = static_cast<long long>(f.height) * f.width;
    for (int c = 0; c < 3; ++c) store(out, f, n, c, y, x, s.ready[c * plane + static_cast<long long>(y) * f.width + x]);
    return;
  }
  // The pixel of the resized image this output pixel shows (mirrored: the
  // flip comes after the window is cut, as RandomHorizontalFlip follows
  // CenterCrop).
  const int rx = s.window_left + (s.flip ? f.width - 1 - x : x);
  const int ry = s.window_top + y;
  float value[3] = {0.f, 0.f, 0.f};
  if (rx >= 0 && rx < s.resized_width && ry >= 0 && ry < s.resized_height) {
    const AxisTaps tx = axis_taps(s.box_left, s.box_width, s.resized_width, rx);
    const AxisTaps ty = axis_taps(s.box_top, s.box_height, s.resized_height, ry);
    // The CPU path's order: each row's horizontal sum first, then the
    // weighted rows added in turn, all in float.
    for (int ky = 0; ky < ty.count; ++ky) {
      const uint8_t* row = s.pixels + (ty.first + ky) * s.pitch + tx.first * 3;
      float across[3] = {0.f, 0.f, 0.f};
      for (int kx = 0; kx < tx.count; ++kx) {
        const float wx = tap_weight(tx, kx);
        for (int c = 0; c < 3; ++c) across[c] += wx * (static_cast<float>(row[kx * 3 + c]) / 255.0f);
      }
      const float wy = tap_weight(ty, ky);
      for (int c = 0; c < 3; ++c) value[c] += wy * across[c];
    }
  }
  for (int c = 0; c < 3; ++c) store(out, f, n, c, y, x, (value[c] - f.mean[c]) * f.inv_std[c]);
}

}  // namespace

void launch_resample_batch(const ResampleSource* sources, int64_t count, const ImageBatchFormat& format, void* out,
                           CUstream_st* stream) {
  if (count == 0 || format.height == 0 || format.width == 0) return;
  BatchLayout f{};
  f.height = static_cast<int>(format.height);
  f.width = static_cast<int>(format.width);
  for (int c = 0; c < 3; ++c) {
    f.mean[c] = format.mean[static_cast<size_t>(c)];
    f.inv_std[c] = format.inv_std[static_cast<size_t>(c)];
  }
  f.bf16 = format.dtype == DType::bfloat16;
  f.channels_last = format.memory_format == MemoryFormat::channels_last;
  const dim3 block(32, 8);
  const dim3 grid((f.width + 31) / 32, (f.height + 7) / 8, static_cast<unsigned>(count));
  resample_batch_kernel<<<grid, block, 0, stream>>>(sources, f, out);
  HEARTH_CUDA_CHECK_LAUNCH();
}

}  // namespace hearth::cuda
