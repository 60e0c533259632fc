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
  int64_t n, c, h, w;     // input
  int64_t o, kh, kw;      // weight
  int64_t oh, ow;         // output plane
  int64_t sh, sw, ph, pw, dh, dw, groups;
  int64_t cg, og;         // channels per group, in and out
  int64_t kk;             // rows of the column matrix of one group: cg * kh * kw
  int64_t p;              // output pixels: oh * ow
  bool pointwise;         // 1x1, stride 1, no padding: the input is its own column matrix
};

// Output columns [lo, hi) whose input column ow * s + off lies inside [0, w).
inline void valid_range(int64_t off, int64_t s, int64_t w, int64_t ow, int64_t* lo, int64_t* hi) {
  *lo = off >= 0 ? 0 : std::min(ow, (-off + s - 1) / s);
  *hi = w - 1 - off >= 0 ? std::min(ow, (w - 1 - off) / s + 1) : 0;
  *lo = std::min(*lo, *hi);
}

// One row of the column matrix: kernel tap (i, j) of plane `src`.
template <typename T>
void im2col_row(const T* src, const ConvGeom& g, int64_t i, int64_t j, T* dst) {
  const int64_t off_w = j * g.dw - g.pw;
  int64_t lo, hi;
  valid_range(off_w, g.sw, g.w, g.ow, &lo, &hi);
  if (lo == hi) {  // the tap only ever sees padding
    std::fill(dst, dst + g.p, T(0));
    return;
  }
  for (int64_t y = 0; y < g.oh; ++y, dst += g.ow) {
    const int64_t ih = y * g.sh - g.ph + i * g.dh;
    if (ih < 0 || ih >= g.h) {
      std::fill(dst, dst + g.ow, T(0));
      continue;
    }
    const T* row = src + ih * g.w;
    std::fill(dst, dst + lo, T(0));
    if (g.sw == 1) std::memcpy(dst + lo, row + off_w + lo, static_cast<size_t>(hi - lo) * sizeof(T));
    else
      for (int64_t x = lo; x < hi; ++x) dst[x] = row[off_w + x * g.sw];
    std::fill(dst + hi, dst + g.ow, T(0));
  }
}

// Column matrix of `channels` consecutive planes starting at `x`; splits the
// planes over threads when called outside a parallel region.
template <typename T>
void im2col(const T* x, const ConvGeom& g, int64_t channels, T* col) {
  const int64_t taps = g.kh * g.kw;
  parallel_for(channels * taps, std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(g.p, 1)),
               [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t c = r / taps, t = r % taps;
      im2col_row(x + c * g.h * g.w, g, t / g.kw, t % g.kw, col + r * g.p);
    }
  });
}

// Adds one row of the column matrix back into plane `dst` (the adjoint of im2col_row).
template <typename T>
void col2im_row(const T* src, const ConvGeom& g, int64_t i, int64_t j, T* dst) {
  const int64_t off_w = j * g.dw - g.pw;
  int64_t lo, hi;
  valid_range(off_w, g.sw, g.w, g.ow, &lo, &hi);
  if (lo == hi) return;
  for (int64_t y = 0; y < g.oh; ++y, src += g.ow) {
    const int64_t ih = y * g.sh - g.ph + i * g.dh;
    if (ih < 0 || ih >= g.h) continue;
    T* row = dst + ih * g.w + off_w + lo * g.sw;
    for (int64_t x = lo; x < hi; ++x) row[(x - lo) * g.sw] += src[x];
  }
}

// Overwrites `channels` planes at `x` with the fold of `col`. Planes are
// independent, so they split over threads outside a parallel region.
template <typename T>
void col2im(const T* col, const ConvGeom& g, int64_t channels, T* x) {
  const int64_t taps = g.kh * g.kw;
  parallel_for(channels, std::max<int64_t>(1, kGrainElementwise / std::max<int64_t>(taps * g.p, 1)),
               [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      T* plane = x + c * g.h * g.w;
      std::fill(plane, plane + g.h * g.w, T(0));
      for (int64_t t = 0; t < taps; ++t) col2im_row(col + (c * taps + t) * g.p, g, t / g.kw, t % g.kw, plane);
    }
  });
}

}  // namespace hearth::cpu
