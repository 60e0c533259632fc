// Unfolding image patches into GEMM operands (im2col) and folding them back
// (col2im, the adjoint, which accumulates overlapping patches).
//
// For `channels` planes of H x W, the column matrix has channels * kH * kW rows,
// row (c * kH + i) * kW + j holding input pixel (oh * sH - pH + i * dH,
// ow * sW - pW + j * dW) of plane c at column oh * OW + ow (zero when outside).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "hearth/backends/cpu/parallel.h"

namespace hearth::cpu {

struct ConvGeom {
  int64_t n, c, h, w;  // input
  int64_t o, kh, kw;   // weight
  int64_t oh, ow;      // output plane
  int64_t sh, sw, ph, pw, dh, dw, groups;
  int64_t cg, og;  // channels per group, in and out
  int64_t kk;      // rows of the column matrix of one group: cg * kh * kw
  int64_t p;       // output pixels: oh * ow
  bool pointwise;  // 1x1, stride 1, no padding: the input is its own column matrix
};

// Output columns [lo, hi) whose input column ow * s + off lies inside [0, w).
inline void valid_range(int64_t off, int64_t s, int64_t w, int64_t ow, int64_t* lo, int64_t* hi) {
  *lo = off >= 0 ? 0 : std::min(ow, (-off + s - 1) / s);
  *hi = w - 1 - off >= 0 ? std::min(ow, (w - 1 - off) / s + 1) : 0;
  *lo = std::min(*lo, *hi);
}

// A band of output rows [y0, y1): the unit the kernels tile their work in, so
// the column matrix of one band stays in cache between im2col and the GEMM.
// Its column matrix has (y1 - y0) * ow columns.
struct Band {
  int64_t y0, y1;
  int64_t cols(const ConvGeom& g) const { return (y1 - y0) * g.ow; }
};

// One row of a band's column matrix: kernel tap (i, j) of plane `src`.
template <typename T>
void im2col_row(const T* src, const ConvGeom& g, Band band, int64_t i, int64_t j, T* dst) {
  const int64_t off_w = j * g.dw - g.pw;
  int64_t lo, hi;
  valid_range(off_w, g.sw, g.w, g.ow, &lo, &hi);
  if (lo == hi) {  // the tap only ever sees padding
    std::fill(dst, dst + band.cols(g), T(0));
    return;
  }
  for (int64_t y = band.y0; y < band.y1; ++y, dst += g.ow) {
    const int64_t ih = y * g.sh - g.ph + i * g.dh;
    if (ih < 0 || ih >= g.h) {
      std::fill(dst, dst + g.ow, T(0));
      continue;
    }
    const T* row = src + ih * g.w;
    std::fill(dst, dst + lo, T(0));
    if (g.sw == 1)
      std::memcpy(dst + lo, row + (off_w + lo), static_cast<size_t>(hi - lo) * sizeof(T));
    else
      for (int64_t x = lo; x < hi; ++x) dst[x] = row[off_w + x * g.sw];
    std::fill(dst + hi, dst + g.ow, T(0));
  }
}

// The band's column matrix of `channels` consecutive planes starting at `x`;
// splits its rows over threads when called outside a parallel region.
template <typename T>
void im2col(const T* x, const ConvGeom& g, int64_t channels, Band band, T* col) {
  const int64_t taps = g.kh * g.kw, cols = band.cols(g);
  parallel_for(channels * taps, std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(cols, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t r = b; r < e; ++r) {
                   const int64_t c = r / taps, t = r % taps;
                   im2col_row(x + c * g.h * g.w, g, band, t / g.kw, t % g.kw, col + r * cols);
                 }
               });
}

// Adds one row of a band's column matrix back into plane `dst` (the adjoint of im2col_row).
template <typename T>
void col2im_row(const T* src, const ConvGeom& g, Band band, int64_t i, int64_t j, T* dst) {
  const int64_t off_w = j * g.dw - g.pw;
  int64_t lo, hi;
  valid_range(off_w, g.sw, g.w, g.ow, &lo, &hi);
  if (lo == hi) return;
  for (int64_t y = band.y0; y < band.y1; ++y, src += g.ow) {
    const int64_t ih = y * g.sh - g.ph + i * g.dh;
    if (ih < 0 || ih >= g.h) continue;
    T* row = dst + (ih * g.w + off_w + lo * g.sw);
    for (int64_t x = lo; x < hi; ++x) row[(x - lo) * g.sw] += src[x];
  }
}

// Adds the fold of a band's column matrix into `channels` planes at `x`.
// Planes are independent, so they split over threads outside a parallel region.
template <typename T>
void col2im_add(const T* col, const ConvGeom& g, int64_t channels, Band band, T* x) {
  const int64_t taps = g.kh * g.kw, cols = band.cols(g);
  parallel_for(channels, std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(taps * cols, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t c = b; c < e; ++c)
                   for (int64_t t = 0; t < taps; ++t)
                     col2im_row(col + (c * taps + t) * cols, g, band, t / g.kw, t % g.kw, x + c * g.h * g.w);
               });
}

}  // namespace hearth::cpu
