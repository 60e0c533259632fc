#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
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

// A byte's value in [0, 1] as the CPU path computes it: float(v) / 255 with
// IEEE division, a sequence of a dozen instructions on the device (3 per tap,
// ~75 taps per pixel) where a table read is one.
__device__ inline float unit_by_division(uint8_t v) { return static_cast<float>(v) / 255.0f; }

// The value of output pixel (x, y) of image n from its taps, in the CPU
// path's order: each row's horizontal sum first, then the weighted rows
// added in turn, all in float. wx(k) and wy(k) give the taps' weights,
// unit(v) a byte's value.
template <typename WeightX, typename WeightY, typename Unit>
__device__ inline void sum_taps(const ResampleSource& s, long long first_x, int count_x, long long first_y, int count_y,
                                WeightX wx, WeightY wy, Unit unit, float value[3]) {
  for (int ky = 0; ky < count_y; ++ky) {
    const auto* row = reinterpret_cast<const uchar4*>(s.pixels + (first_y + ky) * s.pitch) + first_x;
    float across[3] = {0.f, 0.f, 0.f};
    for (int kx = 0; kx < count_x; ++kx) {
      const float w = wx(kx);
      const uchar4 rgb = row[kx];
      across[0] += w * unit(rgb.x);
      across[1] += w * unit(rgb.y);
      across[2] += w * unit(rgb.z);
    }
    const float w = wy(ky);
    for (int c = 0; c < 3; ++c) value[c] += w * across[c];
  }
}

// The pixel of the resized image output column x shows (mirrored: the flip
// comes after the window is cut, as RandomHorizontalFlip follows CenterCrop).
__device__ inline int resized_column(const ResampleSource& s, const BatchLayout& f, int x) {
  return s.window_left + (s.flip ? f.width - 1 - x : x);
}

// Copies an image made on the host by the CPU path: finished already.
__device__ inline void copy_ready(const ResampleSource& s, const BatchLayout& f, void* out, long long n, int y, int x) {
  const long long plane = static_cast<long long>(f.height) * f.width;
  for (int c = 0; c < 3; ++c) store(out, f, n, c, y, x, s.ready[c * plane + static_cast<long long>(y) * f.width + x]);
}

// One thread per output pixel (all three channels); blocks of 32x8 pixels,
// blockIdx.z the image. The taps of the block's 32 columns and 8 rows are
// computed once, by one thread each, into shared memory (max_taps weights
// per column or row): the double-precision filter arithmetic is then done
// 40 times per block instead of for every tap of every pixel, and the
// weights are the same floats, summed in the same order, so the result is
// bit for bit the per-pixel kernel's below. The bytes' values come from a
// table of the same quotients.
constexpr int kBlockX = 32, kBlockY = 8;

struct SharedTaps {
  long long first;
  int count;
};

__global__ void resample_batch_tabled_kernel(const ResampleSource* sources, BatchLayout f, void* out, int max_taps) {
  extern __shared__ float weights[];  // [kBlockX + kBlockY][max_taps]: the columns', then the rows'
  __shared__ SharedTaps taps[kBlockX + kBlockY];
  __shared__ float unit[256];  // unit_by_division of every byte, one per thread of the block
  static_assert(kBlockX * kBlockY == 256, "one thread per byte value");
  const int tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  unit[ty * kBlockX + tx] = unit_by_division(static_cast<uint8_t>(ty * kBlockX + tx));
  const int x = static_cast<int>(blockIdx.x) * kBlockX + tx;
  const int y = static_cast<int>(blockIdx.y) * kBlockY + ty;
  const long long n = blockIdx.z;
  const ResampleSource& s = sources[n];
  if (s.pixels == nullptr) {
    if (x < f.width && y < f.height) copy_ready(s, f, out, n, y, x);
    return;  // the whole block takes this branch: no barrier is skipped by part of it
  }
  // Threads of row 0 tabulate the columns, threads 0-7 of row 1 the rows;
  // an axis position outside the resized image (the window's padding) gets
  // no taps.
  if (ty == 0 || (ty == 1 && tx < kBlockY)) {
    const bool column = ty == 0;
    const int slot = column ? tx : kBlockX + tx;
    SharedTaps entry{0, 0};
    const int o = column ? resized_column(s, f, x) : static_cast<int>(blockIdx.y) * kBlockY + tx + s.window_top;
    const bool inside = column ? (x < f.width && o >= 0 && o < s.resized_width)
                               : (o - s.window_top < f.height && o >= 0 && o < s.resized_height);
    if (inside) {
      const AxisTaps t = column ? axis_taps(s.box_left, s.box_width, s.resized_width, o)
                                : axis_taps(s.box_top, s.box_height, s.resized_height, o);
      entry.first = t.first;
      entry.count = min(t.count, max_taps);  // the host's bound covers every tap; min() only guards memory
      for (int k = 0; k < entry.count; ++k) weights[slot * max_taps + k] = tap_weight(t, k);
    }
    taps[slot] = entry;
  }
  __syncthreads();
  if (x >= f.width || y >= f.height) return;
  const SharedTaps cx = taps[tx], cy = taps[kBlockX + ty];
  float value[3] = {0.f, 0.f, 0.f};
  if (cx.count > 0 && cy.count > 0) {
    const float* wx = weights + tx * max_taps;
    const float* wy = weights + (kBlockX + ty) * max_taps;
    sum_taps(
        s, cx.first, cx.count, cy.first, cy.count, [&](int k) { return wx[k]; }, [&](int k) { return wy[k]; },
        [&](uint8_t v) { return unit[v]; }, value);
  }
  for (int c = 0; c < 3; ++c) store(out, f, n, c, y, x, (value[c] - f.mean[c]) * f.inv_std[c]);
}

// The same per output pixel with the taps computed where they are used: for
// batches whose taps do not fit the table (downscales by more than ~30).
__global__ void resample_batch_kernel(const ResampleSource* sources, BatchLayout f, void* out) {
  const int x = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int y = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  const long long n = blockIdx.z;
  if (x >= f.width || y >= f.height) return;
  const ResampleSource& s = sources[n];
  if (s.pixels == nullptr) {
    copy_ready(s, f, out, n, y, x);
    return;
  }
  const int rx = resized_column(s, f, x);
  const int ry = s.window_top + y;
  float value[3] = {0.f, 0.f, 0.f};
  if (rx >= 0 && rx < s.resized_width && ry >= 0 && ry < s.resized_height) {
    const AxisTaps tx = axis_taps(s.box_left, s.box_width, s.resized_width, rx);
    const AxisTaps ty = axis_taps(s.box_top, s.box_height, s.resized_height, ry);
    sum_taps(
        s, tx.first, tx.count, ty.first, ty.count, [&](int k) { return tap_weight(tx, k); },
        [&](int k) { return tap_weight(ty, k); }, [](uint8_t v) { return unit_by_division(v); }, value);
  }
  for (int c = 0; c < 3; ++c) store(out, f, n, c, y, x, (value[c] - f.mean[c]) * f.inv_std[c]);
}

}  // namespace

int resample_taps_bound(const ResampleSource& s) {
  if (s.pixels == nullptr) return 0;
  // axis_taps' window: 2 * ceil(support) + 1 taps at most, support the
  // downscale factor (at least 1).
  auto bound = [](double length, int32_t out_size) {
    const double support = out_size > 0 ? std::fmax(length / static_cast<double>(out_size), 1.0) : 1.0;
    return static_cast<int>(std::ceil(support)) * 2 + 1;
  };
  return std::max(bound(s.box_width, s.resized_width), bound(s.box_height, s.resized_height));
}

void launch_resample_batch(const ResampleSource* sources, int64_t count, const ImageBatchFormat& format, void* out,
                           CUstream_st* stream, int max_taps) {
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
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((f.width + kBlockX - 1) / kBlockX, (f.height + kBlockY - 1) / kBlockY, static_cast<unsigned>(count));
  if (max_taps <= kMaxTabledTaps) {
    const int taps = std::max(max_taps, 1);
    const size_t shared = static_cast<size_t>(kBlockX + kBlockY) * static_cast<size_t>(taps) * sizeof(float);
    resample_batch_tabled_kernel<<<grid, block, shared, stream>>>(sources, f, out, taps);
  } else {
    resample_batch_kernel<<<grid, block, 0, stream>>>(sources, f, out);
  }
  HEARTH_CUDA_CHECK_LAUNCH();
}

}  // namespace hearth::cuda
