// The pooling kernels' shared geometry (max_pool.cu, pooling.cu): the window
// attributes and both tensors' sizes and layout, how a thread's element maps
// to its (n, c) plane and position and back, and the 32-bit form of all of it
// where every offset fits (64-bit division is a long software sequence on the
// GPU, and these kernels divide several times per element they move).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "hearth/backends/cuda/loops.cuh"
#include "hearth/core/tensor.h"
#include "hearth/dispatch/schemas/pooling.h"

namespace hearth::cuda::pooling {

template <typename I>
struct Geom {
  I planes, channels, h, w, oh, ow;
  I kh, kw, sh, sw, ph, pw, dh, dw;
  bool count_include_pad;
  bool nhwc;
};
using Geometry = Geom<int64_t>;

// An element of a [planes, hh, ww] image: its (n, c) plane and position.
template <typename I>
struct Pos {
  I plane, y, x;
};

// The i-th element in memory order of an image of hh x ww planes.
template <typename I>
__device__ inline Pos<I> position(const Geom<I>& g, I i, I hh, I ww) {
  if (!g.nhwc) return {i / (hh * ww), (i / ww) % hh, i % ww};
  const I c = i % g.channels, pix = i / g.channels;
  const I n = pix / (hh * ww);
  return {n * g.channels + c, (pix / ww) % hh, pix % ww};
}

// The memory offset of (plane, y, x) in an image of hh x ww planes.
template <typename I>
__device__ inline I offset(const Geom<I>& g, I plane, I y, I x, I hh, I ww) {
  if (!g.nhwc) return (plane * hh + y) * ww + x;
  const I n = plane / g.channels, c = plane % g.channels;
  return ((n * hh + y) * ww + x) * g.channels + c;
}

inline Geometry geometry(const Tensor& x, const Tensor& out, const Pool2dAttrs* a) {
  Geometry g{};
  g.planes = x.size(0) * x.size(1);
  g.channels = x.size(1);
  // Every tensor of a call shares one format (schemas/pooling.h); the input-plane
  // tensor decides, the output-plane one when it is the unambiguous one.
  g.nhwc = x.suggest_memory_format() == MemoryFormat::channels_last ||
           out.suggest_memory_format() == MemoryFormat::channels_last;
  g.h = x.size(2);
  g.w = x.size(3);
  g.oh = out.size(2);
  g.ow = out.size(3);
  if (a) {
    g.kh = a->kernel[0];
    g.kw = a->kernel[1];
    g.sh = a->stride[0];
    g.sw = a->stride[1];
    g.ph = a->padding[0];
    g.pw = a->padding[1];
    g.dh = a->dilation[0];
    g.dw = a->dilation[1];
    g.count_include_pad = a->count_include_pad;
  }
  return g;
}

// The geometry in 32-bit arithmetic; only when offsets of both tensors fit
// (max_pool2d's indices, h * W + w, are smaller than either).
inline Geom<int32_t> narrow(const Geometry& g) {
  auto n = [](int64_t v) { return static_cast<int32_t>(v); };
  return {n(g.planes), n(g.channels), n(g.h),  n(g.w),  n(g.oh),
          n(g.ow),     n(g.kh),       n(g.kw), n(g.sh), n(g.sw),
          n(g.ph),     n(g.pw),       n(g.dh), n(g.dw), g.count_include_pad,
          g.nhwc};
}

inline bool fits_int32(const Geometry& g) {
  const int64_t limit = std::numeric_limits<int32_t>::max();
  // Window arithmetic reaches (out - 1) * stride + (kernel - 1) * dilation.
  const int64_t reach = std::max((g.oh + 1) * g.sh + g.kh * g.dh, (g.ow + 1) * g.sw + g.kw * g.dw);
  return g.planes * std::max(g.h * g.w, g.oh * g.ow) < limit && reach < limit;
}

inline unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// Calls f(geometry) with the geometry in the narrowest index type that holds it.
template <typename F>
void with_index_type(const Geometry& g, F&& f) {
  if (fits_int32(g))
    f(narrow(g));
  else
    f(g);
}

// Outputs along one dim whose window can hold input position `in`: o s - p + j d
// = in for some j in [0, k), so o lies in [ceil((in + p - (k - 1) d) / s),
// floor((in + p) / s)], clipped to [0, out). With dilation some of them skip

}  // namespace hearth::cuda::pooling
