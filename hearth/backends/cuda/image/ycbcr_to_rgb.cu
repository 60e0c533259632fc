#include <cuda_runtime.h>

#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/image/ycbcr_to_rgb.h"

namespace hearth::cuda {
namespace {

// A chroma plane and its geometry, as one thread reads it.
struct ChromaPlane {
  const uint8_t* p;
  int pitch, width, height;
  __device__ int at(int row, int col) const { return p[static_cast<long long>(row) * pitch + col]; }
};

// 2x across and down (4:2:0): each output sample weighs the nearer chroma
// row 3 to the farther 1, then the nearer column 3 to the farther 1; rows
// beyond the plane repeat its edge rows, the first and last columns weigh
// only themselves; rounding biases 8 and 7 alternate by column.
__device__ inline int fancy_h2v2(const ChromaPlane& c, int x, int y) {
  const int cy = y >> 1;
  const int fy = (y & 1) ? min(cy + 1, c.height - 1) : max(cy - 1, 0);
  auto column_sum = [&](int col) { return 3 * c.at(cy, col) + c.at(fy, col); };
  const int cx = x >> 1;
  const int here = column_sum(cx);
  if ((x & 1) == 0) return cx == 0 ? (here * 4 + 8) >> 4 : (here * 3 + column_sum(cx - 1) + 8) >> 4;
  return cx == c.width - 1 ? (here * 4 + 7) >> 4 : (here * 3 + column_sum(cx + 1) + 7) >> 4;
}

// 2x across (4:2:2): the nearer column 3 to the farther 1, biases 1 and 2;
// the first and last output columns repeat their sample.
__device__ inline int fancy_h2v1(const ChromaPlane& c, int x, int y) {
  const int cx = x >> 1;
  const int here = c.at(y, cx);
  if ((x & 1) == 0) return cx == 0 ? here : (here * 3 + c.at(y, cx - 1) + 1) >> 2;
  return cx == c.width - 1 ? here : (here * 3 + c.at(y, cx + 1) + 2) >> 2;
}

// 2x down (4:4:0): the nearer row 3 to the farther 1 (edge rows repeated),
// biases 1 and 2.
__device__ inline int fancy_h1v2(const ChromaPlane& c, int x, int y) {
  const int cy = y >> 1;
  if ((y & 1) == 0) return (c.at(cy, x) * 3 + c.at(max(cy - 1, 0), x) + 1) >> 2;
  return (c.at(cy, x) * 3 + c.at(min(cy + 1, c.height - 1), x) + 2) >> 2;
}

// The chroma sample at image pixel (x, y), upsampled as libjpeg does.
__device__ inline int chroma_at(const ChromaPlane& c, int h, int v, int x, int y) {
  if (h == 1 && v == 1) return c.at(y, x);
  // libjpeg filters 2x across only for planes wider than 2 samples.
  if (h == 2 && v == 2 && c.width > 2) return fancy_h2v2(c, x, y);
  if (h == 2 && v == 1 && c.width > 2) return fancy_h2v1(c, x, y);
  if (h == 1 && v == 2) return fancy_h1v2(c, x, y);
  return c.at(y / v, x / h);
}

__device__ inline uint8_t clamp_byte(int v) { return static_cast<uint8_t>(min(max(v, 0), 255)); }

// libjpeg's YCbCr to RGB in 16-bit fixed point: the factors 1.402, 0.34414,
// 0.71414 and 1.772 rounded to 1/65536, half added, arithmetic shifts.
constexpr int kFixCrR = 91881, kFixCbG = 22554, kFixCrG = 46802, kFixCbB = 116130, kHalf = 1 << 15;

__global__ void ycbcr_to_rgb_kernel(const YcbcrSource* sources) {
  const YcbcrSource& s = sources[blockIdx.z];
  const int rx = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int ry = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (s.rgb == nullptr || rx >= s.region_width || ry >= s.region_height) return;
  const int x = s.left + rx, y = s.top + ry;
  if (x >= s.width || y >= s.height) return;
  const int luma = s.planes[0][static_cast<long long>(y) * s.pitches[0] + x];
  const ChromaPlane cb{s.planes[1], s.pitches[1], s.chroma_width, s.chroma_height};
  const ChromaPlane cr{s.planes[2], s.pitches[2], s.chroma_width, s.chroma_height};
  const int b = chroma_at(cb, s.h_factor, s.v_factor, x, y) - 128;
  const int r = chroma_at(cr, s.h_factor, s.v_factor, x, y) - 128;
  // One 32-bit store per pixel: a warp writes 128 contiguous bytes.
  *reinterpret_cast<uchar4*>(s.rgb + y * s.rgb_pitch + 4LL * x) = make_uchar4(
      clamp_byte(luma + ((kFixCrR * r + kHalf) >> 16)), clamp_byte(luma + ((-kFixCbG * b + kHalf - kFixCrG * r) >> 16)),
      clamp_byte(luma + ((kFixCbB * b + kHalf) >> 16)), 0);
}

}  // namespace

void launch_ycbcr_to_rgb_batch(const YcbcrSource* sources, int64_t count, int32_t max_width, int32_t max_height,
                               CUstream_st* stream) {
  if (count == 0 || max_width <= 0 || max_height <= 0) return;
  const dim3 block(32, 8);
  const dim3 grid((static_cast<unsigned>(max_width) + 31) / 32, (static_cast<unsigned>(max_height) + 7) / 8,
                  static_cast<unsigned>(count));
  ycbcr_to_rgb_kernel<<<grid, block, 0, stream>>>(sources);
  HEARTH_CUDA_CHECK_LAUNCH();
}

}  // namespace hearth::cuda
