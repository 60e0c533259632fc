// 2-D pooling on CUDA with the CPU backend's contract (indices saved by the
// forward max pool; see hearth/dispatch/schemas/pooling.h), so both devices
// share one functional layer. One thread per output element forward and one
// per input element backward: every backward gathers from the outputs whose
// windows can contain its input cell, in a fixed order, and writes its cell
// once in the tensor's dtype, so there is no zeroing pass, no atomics, and the
// result does not change from run to run. Max pooling's backward adds the
// gradient of each candidate output whose saved index is this cell.
// NHWC (channels_last) calls run the same kernels: thread i takes the i-th
// element in memory order (channel fastest, so a warp reads adjacent channels)
// and addresses the other tensor through Geometry's layout; a max-pool index
// is the argmax's place in its output's window in either layout. Max
// pooling on NHWC with 16-byte-aligned rows of C channels has vector kernels: a
// thread takes 16 bytes of channels of one pixel.
// Index arithmetic is 32-bit when every offset fits: 64-bit division is a long
// software sequence on the GPU, and these kernels divide several times per
// element they move.
#include <limits>

#include "hearth/backends/cuda/loops.cuh"
#include "hearth/backends/cuda/nn_util.cuh"
#include "hearth/dispatch/dispatch.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/pooling.h"

namespace hearth::cuda {
namespace {

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

Geometry geometry(const Tensor& x, const Tensor& out, const Pool2dAttrs* a) {
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
Geom<int32_t> narrow(const Geometry& g) {
  auto n = [](int64_t v) { return static_cast<int32_t>(v); };
  return {n(g.planes), n(g.channels), n(g.h),  n(g.w),  n(g.oh),
          n(g.ow),     n(g.kh),       n(g.kw), n(g.sh), n(g.sw),
          n(g.ph),     n(g.pw),       n(g.dh), n(g.dw), g.count_include_pad,
          g.nhwc};
}

bool fits_int32(const Geometry& g) {
  const int64_t limit = std::numeric_limits<int32_t>::max();
  // Window arithmetic reaches (out - 1) * stride + (kernel - 1) * dilation.
  const int64_t reach = std::max((g.oh + 1) * g.sh + g.kh * g.dh, (g.ow + 1) * g.sw + g.kw * g.dw);
  return g.planes * std::max(g.h * g.w, g.oh * g.ow) < limit && reach < limit;
}

unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

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
// `in`; the saved index decides, so a superset is enough.
template <typename I>
struct Span {
  I first, last;
};
template <typename I>
__device__ inline Span<I> windows_holding(I in, I k, I s, I p, I d, I out) {
  const I lo = in + p - (k - 1) * d;
  const I first = lo <= 0 ? I(0) : (lo + s - 1) / s;
  const I last = min(out - 1, (in + p) / s);
  return {first, last};
}

// The maximum of output (oy, ox)'s window in plane `plane` and its position
// y * W + x: the first maximum in window order wins, a NaN stops the scan. The
// forward and the backward (which finds the argmax again instead of saving
// indices) share it, so both pick the same cell. `slot`, when given, gets
// the argmax's place ky * kw + kx in the window: the saved index.
template <typename D, typename I>
__device__ inline I window_argmax(const D* x, const Geom<I>& g, I plane, I oy, I ox, acc_t<D>& best,
                                  uint8_t* slot = nullptr) {
  best = 0;
  I best_i = -1;
  if (slot) *slot = 0;
  for (I ky = 0; ky < g.kh; ++ky) {
    const I y = oy * g.sh - g.ph + ky * g.dh;
    if (y < 0 || y >= g.h) continue;
    for (I kx = 0; kx < g.kw; ++kx) {
      const I xx = ox * g.sw - g.pw + kx * g.dw;
      if (xx < 0 || xx >= g.w) continue;
      const acc_t<D> v = to_acc(x[offset(g, plane, y, xx, g.h, g.w)]);
      if (best_i < 0 || v > best || v != v) {
        best = v;
        best_i = y * g.w + xx;
        if (slot) *slot = static_cast<uint8_t>(ky * g.kw + kx);
        if (v != v) break;
      }
    }
    if (best != best) break;
  }
  return best_i < 0 ? I(0) : best_i;
}

// The place of input cell (y, x) in the window of output (oy, ox), as the
// forward saved it, or kNoSlot where the cell is not one of the window's
// (dilation skips it). Saved places are below 255 (schemas/pooling.h).
constexpr uint8_t kNoSlot = 255;
template <typename I>
__device__ inline uint8_t slot_of_cell(const Geom<I>& g, I oy, I ox, I y, I x) {
  I ky = y - (oy * g.sh - g.ph), kx = x - (ox * g.sw - g.pw);
  if (g.dh != 1) {
    if (ky % g.dh != 0) return kNoSlot;
    ky /= g.dh;
  }
  if (g.dw != 1) {
    if (kx % g.dw != 0) return kNoSlot;
    kx /= g.dw;
  }
  return static_cast<uint8_t>(ky * g.kw + kx);
}

// kIndices: also each output's argmax, for a backward that reads them.
template <typename D, typename I, bool kIndices>
__global__ void max_pool_fwd(const D* x, D* out, uint8_t* idx, Geom<I> g, I total) {
  const I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const Pos<I> o = position(g, i, g.oh, g.ow);
  acc_t<D> best;
  uint8_t slot;
  window_argmax(x, g, o.plane, o.y, o.x, best, kIndices ? &slot : nullptr);
  out[i] = from_acc<D>(best);
  if constexpr (kIndices) idx[i] = slot;
}

// NHWC, C a multiple of VEC: window_argmax for channels [c, c + VEC) of image
// n's output pixel (oy, ox), each lane by the scalar rule (first maximum wins,
// a NaN is kept).
template <typename D, int VEC, typename I>
__device__ inline void window_argmax_vec(const D* __restrict__ x, const Geom<I>& g, I n, I c, I oy, I ox,
                                         acc_t<D> (&best)[VEC], I (&best_i)[VEC], uint8_t* slots = nullptr) {
  using A = acc_t<D>;
#pragma unroll
  for (int e = 0; e < VEC; ++e) {
    best[e] = 0;
    best_i[e] = -1;
    if (slots) slots[e] = 0;
  }
  for (I ky = 0; ky < g.kh; ++ky) {
    const I y = oy * g.sh - g.ph + ky * g.dh;
    if (y < 0 || y >= g.h) continue;
    for (I kx = 0; kx < g.kw; ++kx) {
      const I xx = ox * g.sw - g.pw + kx * g.dw;
      if (xx < 0 || xx >= g.w) continue;
      const nn::Pack<D, VEC> p =
          *reinterpret_cast<const nn::Pack<D, VEC>*>(x + ((n * g.h + y) * g.w + xx) * g.channels + c);
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        const A v = to_acc(p.v[e]);
        if (best_i[e] < 0 || (best[e] == best[e] && (v > best[e] || v != v))) {
          best[e] = v;
          best_i[e] = y * g.w + xx;
          if (slots) slots[e] = static_cast<uint8_t>(ky * g.kw + kx);
        }
      }
    }
  }
#pragma unroll
  for (int e = 0; e < VEC; ++e)
    if (best_i[e] < 0) best_i[e] = 0;
}

// NHWC, C a multiple of VEC: the output pixel (n, oy, ox) and first channel c
// of thread t, which takes channels [c, c + VEC) of that pixel
// (t = pixel * C / VEC + c / VEC: its outputs start at element t * VEC).
template <typename I>
struct OutputChannels {
  I n, oy, ox, c;
};
template <int VEC, typename I>
__device__ inline OutputChannels<I> output_channels_of(const Geom<I>& g, I t) {
  const I chunks = g.channels / VEC;
  const I pix = t / chunks;
  return {pix / (g.ow * g.oh), (pix / g.ow) % g.oh, pix % g.ow, (t % chunks) * VEC};
}

// NHWC, C a multiple of VEC: thread t takes channels [c, c + VEC) of one output
// pixel, t = pixel * C / VEC + c / VEC, so its outputs start at element t * VEC.
template <typename D, int VEC, typename I, bool kIndices>
__global__ void max_pool_fwd_nhwc_vec(const D* __restrict__ x, D* __restrict__ out, uint8_t* __restrict__ idx,
                                      Geom<I> g, I total) {
  const I t = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= total) return;
  const auto [n, oy, ox, c] = output_channels_of<VEC>(g, t);
  acc_t<D> best[VEC];
  I best_i[VEC];
  nn::Pack<uint8_t, VEC> slots;
  window_argmax_vec<D, VEC, I>(x, g, n, c, oy, ox, best, best_i, kIndices ? slots.v : nullptr);
  nn::Pack<D, VEC> o;
#pragma unroll
  for (int e = 0; e < VEC; ++e) o.v[e] = from_acc<D>(best[e]);
  reinterpret_cast<nn::Pack<D, VEC>*>(out)[t] = o;
  if constexpr (kIndices) reinterpret_cast<nn::Pack<uint8_t, VEC>*>(idx)[t] = slots;
}

// One thread per input element: the sum of grad_out over the candidate outputs
// whose argmax is this element, in (oh, ow) order: the order in which the CPU
// kernel scatters, so both round the same sums. kSaved: the argmax is the
// forward's saved index (overlapping windows); otherwise it is found again in
// x with the forward's own function.
template <typename D, typename I, bool kSaved>
__global__ void max_pool_bwd(const D* __restrict__ gy, const uint8_t* __restrict__ idx, const D* __restrict__ x,
                             D* __restrict__ gx, Geom<I> g, I total) {
  const I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const Pos<I> at = position(g, i, g.h, g.w);
  const I me = at.y * g.w + at.x;
  const Span<I> ys = windows_holding(at.y, g.kh, g.sh, g.ph, g.dh, g.oh);
  const Span<I> xs = windows_holding(at.x, g.kw, g.sw, g.pw, g.dw, g.ow);
  acc_t<D> s = 0;
  for (I oy = ys.first; oy <= ys.last; ++oy)
    for (I ox = xs.first; ox <= xs.last; ++ox) {
      const I o = offset(g, at.plane, oy, ox, g.oh, g.ow);
      bool mine;
      if constexpr (kSaved) {
        mine = idx[o] == slot_of_cell(g, oy, ox, at.y, at.x);
      } else {
        acc_t<D> best;
        mine = window_argmax(x, g, at.plane, oy, ox, best) == me;
      }
      if (mine) s += to_acc(gy[o]);
    }
  gx[i] = from_acc<D>(s);
}

// NHWC, C a multiple of VEC: thread t takes channels [c, c + VEC) of one input
// pixel and, per candidate output, VEC gradients and VEC argmaxes: saved
// one-byte window places (VEC in one load), or found again in x (the window's cells are
// mostly in cache: the neighbouring threads read them too).
template <typename D, int VEC, typename I, bool kSaved>
__global__ void max_pool_bwd_nhwc_vec(const D* __restrict__ gy, const uint8_t* __restrict__ idx,
                                      const D* __restrict__ x, D* __restrict__ gx, Geom<I> g, I total) {
  using A = acc_t<D>;
  const I t = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= total) return;
  const I chunks = g.channels / VEC;
  const I c = (t % chunks) * VEC, pix = t / chunks;
  const I xx = pix % g.w, y = (pix / g.w) % g.h, n = pix / (g.w * g.h);
  const I me = y * g.w + xx;
  const Span<I> ys = windows_holding(y, g.kh, g.sh, g.ph, g.dh, g.oh);
  const Span<I> xs = windows_holding(xx, g.kw, g.sw, g.pw, g.dw, g.ow);
  A s[VEC];
#pragma unroll
  for (int e = 0; e < VEC; ++e) s[e] = 0;
  for (I oy = ys.first; oy <= ys.last; ++oy)
    for (I ox = xs.first; ox <= xs.last; ++ox) {
      const I o = ((n * g.oh + oy) * g.ow + ox) * g.channels + c;
      bool mine[VEC];
      if constexpr (kSaved) {
        // One place of this cell per window, compared with VEC saved bytes.
        const uint8_t here = slot_of_cell(g, oy, ox, y, xx);
        const nn::Pack<uint8_t, VEC> slots = *reinterpret_cast<const nn::Pack<uint8_t, VEC>*>(idx + o);
#pragma unroll
        for (int e = 0; e < VEC; ++e) mine[e] = slots.v[e] == here;
      } else {
        A best[VEC];
        I arg[VEC];
        window_argmax_vec<D, VEC, I>(x, g, n, c, oy, ox, best, arg);
#pragma unroll
        for (int e = 0; e < VEC; ++e) mine[e] = arg[e] == me;
      }
      const nn::Pack<D, VEC> gp = *reinterpret_cast<const nn::Pack<D, VEC>*>(gy + o);
#pragma unroll
      for (int e = 0; e < VEC; ++e)
        if (mine[e]) s[e] += to_acc(gp.v[e]);
    }
  nn::Pack<D, VEC> out;
#pragma unroll
  for (int e = 0; e < VEC; ++e) out.v[e] = from_acc<D>(s[e]);
  reinterpret_cast<nn::Pack<D, VEC>*>(gx)[t] = out;
}

// Windows that tile the input (kernel == stride, no padding or dilation, the
// outputs covering every row and column: VGG's 2x2 pools): every input cell
// lies in exactly one window, so its gradient is that window's grad_out where
// it is the argmax and 0 elsewhere. One thread per output (VEC channels of one
// output pixel) then finds the argmax once, reading the window's cells once,
// and writes all of them: x, grad_out and grad_x each move once. The gather
// kernels above take one thread per input cell, which finds its window's
// argmax again (every cell of x read by each of the window's k*k threads) and
// ran at a third of the bandwidth on VGG16's pools. The sums are the same
// (one term or none), so the result is bit for bit the gather's.
bool windows_tile_input(const Geometry& g) {
  return g.kh == g.sh && g.kw == g.sw && g.ph == 0 && g.pw == 0 && g.dh == 1 && g.dw == 1 && g.oh * g.sh == g.h &&
         g.ow * g.sw == g.w;
}

template <typename D, int VEC, typename I>
__global__ void max_pool_bwd_tiled_nhwc_vec(const D* __restrict__ gy, const D* __restrict__ x, D* __restrict__ gx,
                                            Geom<I> g, I total) {
  const I t = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= total) return;
  const auto [n, oy, ox, c] = output_channels_of<VEC>(g, t);
  acc_t<D> best[VEC];
  I arg[VEC];
  window_argmax_vec<D, VEC, I>(x, g, n, c, oy, ox, best, arg);
  const nn::Pack<D, VEC> gp = reinterpret_cast<const nn::Pack<D, VEC>*>(gy)[t];
  for (I ky = 0; ky < g.kh; ++ky) {
    const I y = oy * g.sh + ky;
    for (I kx = 0; kx < g.kw; ++kx) {
      const I xx = ox * g.sw + kx, me = y * g.w + xx;
      nn::Pack<D, VEC> out;
#pragma unroll
      for (int e = 0; e < VEC; ++e) out.v[e] = arg[e] == me ? gp.v[e] : from_acc<D>(acc_t<D>(0));
      *reinterpret_cast<nn::Pack<D, VEC>*>(gx + ((n * g.h + y) * g.w + xx) * g.channels + c) = out;
    }
  }
}

// The same for any layout, one output element per thread.
template <typename D, typename I>
__global__ void max_pool_bwd_tiled(const D* __restrict__ gy, const D* __restrict__ x, D* __restrict__ gx, Geom<I> g,
                                   I total) {
  const I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const Pos<I> o = position(g, i, g.oh, g.ow);
  acc_t<D> best;
  const I arg = window_argmax(x, g, o.plane, o.y, o.x, best);
  const D grad = gy[i];
  for (I ky = 0; ky < g.kh; ++ky) {
    const I y = o.y * g.sh + ky;
    for (I kx = 0; kx < g.kw; ++kx) {
      const I xx = o.x * g.sw + kx;
      gx[offset(g, o.plane, y, xx, g.h, g.w)] = y * g.w + xx == arg ? grad : from_acc<D>(acc_t<D>(0));
    }
  }
}

__device__ inline int64_t avg_divisor(const Geometry& g, int64_t oh, int64_t ow) {
  int64_t y0 = oh * g.sh - g.ph, x0 = ow * g.sw - g.pw;
  int64_t y1 = min(y0 + g.kh, g.h + g.ph), x1 = min(x0 + g.kw, g.w + g.pw);
  if (g.count_include_pad) return (y1 - y0) * (x1 - x0);
  return (min(y1, g.h) - max(y0, int64_t(0))) * (min(x1, g.w) - max(x0, int64_t(0)));
}

template <typename D>
__global__ void avg_pool_fwd(const D* x, D* out, Geometry g) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= g.planes * g.oh * g.ow) return;
  const Pos<int64_t> o = position(g, i, g.oh, g.ow);
  const int64_t oh = o.y, ow = o.x;
  int64_t y0 = oh * g.sh - g.ph, x0 = ow * g.sw - g.pw;
  acc_t<D> s = 0;
  for (int64_t y = max(y0, int64_t(0)); y < min(y0 + g.kh, g.h); ++y)
    for (int64_t xx = max(x0, int64_t(0)); xx < min(x0 + g.kw, g.w); ++xx)
      s += to_acc(x[offset(g, o.plane, y, xx, g.h, g.w)]);
  int64_t div = avg_divisor(g, oh, ow);
  out[i] = from_acc<D>(div > 0 ? s / static_cast<acc_t<D>>(div) : acc_t<D>(0));
}

template <typename D>
__global__ void avg_pool_bwd(const D* gy, D* gx, Geometry g) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= g.planes * g.h * g.w) return;
  const Pos<int64_t> at = position(g, i, g.h, g.w);
  const int64_t xx = at.x, y = at.y;
  // Outputs whose window [o s - p, o s - p + k) contains this input position.
  int64_t oh0 = max(int64_t(0), (y + g.ph - g.kh + g.sh) / g.sh), oh1 = min(g.oh - 1, (y + g.ph) / g.sh);
  int64_t ow0 = max(int64_t(0), (xx + g.pw - g.kw + g.sw) / g.sw), ow1 = min(g.ow - 1, (xx + g.pw) / g.sw);
  acc_t<D> s = 0;
  for (int64_t oh = oh0; oh <= oh1; ++oh) {
    int64_t ys = oh * g.sh - g.ph;
    if (y < ys || y >= ys + g.kh) continue;
    for (int64_t ow = ow0; ow <= ow1; ++ow) {
      int64_t xs = ow * g.sw - g.pw;
      if (xx < xs || xx >= xs + g.kw) continue;
      int64_t div = avg_divisor(g, oh, ow);
      if (div > 0) s += to_acc(gy[offset(g, at.plane, oh, ow, g.oh, g.ow)]) / static_cast<acc_t<D>>(div);
    }
  }
  gx[i] = from_acc<D>(s);
}

__device__ inline int64_t adaptive_start(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
__device__ inline int64_t adaptive_end(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

template <typename D>
__global__ void adaptive_avg_fwd(const D* x, D* out, Geometry g) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= g.planes * g.oh * g.ow) return;
  const Pos<int64_t> o = position(g, i, g.oh, g.ow);
  const int64_t oh = o.y, ow = o.x;
  int64_t y0 = adaptive_start(oh, g.h, g.oh), y1 = adaptive_end(oh, g.h, g.oh);
  int64_t x0 = adaptive_start(ow, g.w, g.ow), x1 = adaptive_end(ow, g.w, g.ow);
  acc_t<D> s = 0;
  for (int64_t y = y0; y < y1; ++y)
    for (int64_t xx = x0; xx < x1; ++xx) s += to_acc(x[offset(g, o.plane, y, xx, g.h, g.w)]);
  out[i] = from_acc<D>(s / static_cast<acc_t<D>>((y1 - y0) * (x1 - x0)));
}

template <typename D>
__global__ void adaptive_avg_bwd(const D* gy, D* gx, Geometry g) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= g.planes * g.h * g.w) return;
  const Pos<int64_t> at = position(g, i, g.h, g.w);
  const int64_t xx = at.x, y = at.y;
  acc_t<D> s = 0;
  for (int64_t oh = (y * g.oh) / g.h; oh < g.oh && adaptive_start(oh, g.h, g.oh) <= y; ++oh) {
    int64_t y0 = adaptive_start(oh, g.h, g.oh), y1 = adaptive_end(oh, g.h, g.oh);
    if (y >= y1) continue;
    for (int64_t ow = (xx * g.ow) / g.w; ow < g.ow && adaptive_start(ow, g.w, g.ow) <= xx; ++ow) {
      int64_t x0 = adaptive_start(ow, g.w, g.ow), x1 = adaptive_end(ow, g.w, g.ow);
      if (xx >= x1) continue;
      s += to_acc(gy[offset(g, at.plane, oh, ow, g.oh, g.ow)]) / static_cast<acc_t<D>>((y1 - y0) * (x1 - x0));
    }
  }
  gx[i] = from_acc<D>(s);
}

// Global average pooling's backward (a 1x1 output, ResNet's head): every input
// cell gets its plane's gradient over h*w, so a thread needs only its plane,
// found with index arithmetic in I (32 bits where the tensor allows) instead
// of the general kernel's 64-bit window searches, which made this op 20x
// slower than its bytes (0.24 ms for ResNet-50's [128, 2048, 7, 7]).
template <typename D, typename I>
__global__ void global_avg_bwd(const D* gy, D* gx, I total, I hw, I channels, bool nhwc) {
  const I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const I plane = nhwc ? (i / (hw * channels)) * channels + i % channels : i / hw;
  gx[i] = from_acc<D>(to_acc(gy[plane]) / static_cast<acc_t<D>>(hw));
}

// The channels of one 16-byte vector when C and every pointer allow it, else 1.
template <typename D>
int nhwc_vector(const Geometry& g, std::initializer_list<const void*> ptrs) {
  constexpr int kVec = nn::kVecOf<D>;
  if (!g.nhwc || kVec < 2 || g.channels % kVec != 0) return 1;
  for (const void* p : ptrs)
    if (!nn::aligned16(p)) return 1;
  return kVec;
}

void max_pool2d(OpCall& call) {
  const Tensor &x = call.in(0), &out = call.out(0);
  const Tensor idx = call.outputs.size() > 1 ? call.out(1) : Tensor();  // wanted for overlapping windows
  int dev = out.device().index;
  activate(dev);
  const Geometry g = geometry(x, out, &call.attrs<Pool2dAttrs>());
  HEARTH_CUDA_DISPATCH_FLOATING(x.dtype(), "max_pool2d", [&] {
    using D = scalar_t;
    const D* xp = static_cast<const D*>(x.data_ptr());
    D* op = static_cast<D*>(out.data_ptr());
    uint8_t* ip = idx.defined() ? static_cast<uint8_t*>(idx.data_ptr()) : nullptr;
    const int vec = nhwc_vector<D>(g, {xp, op, ip});
    with_index_type(g, [&](auto gi) {
      using I = decltype(gi.h);
      const int64_t threads = out.numel() / vec;
      const unsigned grid = blocks(threads);
      if (vec > 1 && ip)
        max_pool_fwd_nhwc_vec<D, nn::kVecOf<D>, I, true>
            <<<grid, kThreads, 0, stream(dev)>>>(xp, op, ip, gi, static_cast<I>(threads));
      else if (vec > 1)
        max_pool_fwd_nhwc_vec<D, nn::kVecOf<D>, I, false>
            <<<grid, kThreads, 0, stream(dev)>>>(xp, op, ip, gi, static_cast<I>(threads));
      else if (ip)
        max_pool_fwd<D, I, true><<<grid, kThreads, 0, stream(dev)>>>(xp, op, ip, gi, static_cast<I>(threads));
      else
        max_pool_fwd<D, I, false><<<grid, kThreads, 0, stream(dev)>>>(xp, op, ip, gi, static_cast<I>(threads));
    });
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

void max_pool2d_backward(OpCall& call) {
  // Saved indices (input 1) where the forward kept them, else the input (2).
  const Tensor &gy = call.in(0), &idx = call.in(1), &gx = call.out(0);
  const Tensor x = idx.defined() ? Tensor() : call.in(2);
  int dev = gx.device().index;
  activate(dev);
  const Geometry g = geometry(gx, gy, &call.attrs<Pool2dAttrs>());
  HEARTH_CUDA_DISPATCH_FLOATING(gy.dtype(), "max_pool2d_backward", [&] {
    using D = scalar_t;
    const D* gp = static_cast<const D*>(gy.data_ptr());
    const D* xp = x.defined() ? static_cast<const D*>(x.data_ptr()) : nullptr;
    const uint8_t* ip = idx.defined() ? static_cast<const uint8_t*>(idx.data_ptr()) : nullptr;
    D* op = static_cast<D*>(gx.data_ptr());
    const int vec = nhwc_vector<D>(g, {gp, xp, ip, op});
    with_index_type(g, [&](auto gi) {
      using I = decltype(gi.h);
      if (!ip && windows_tile_input(g) && gy.numel() > 0) {
        const int64_t threads = gy.numel() / vec;
        const unsigned grid = blocks(threads);
        const I n = static_cast<I>(threads);
        if (vec > 1)
          max_pool_bwd_tiled_nhwc_vec<D, nn::kVecOf<D>, I><<<grid, kThreads, 0, stream(dev)>>>(gp, xp, op, gi, n);
        else
          max_pool_bwd_tiled<D, I><<<grid, kThreads, 0, stream(dev)>>>(gp, xp, op, gi, n);
        return;
      }
      const int64_t threads = gx.numel() / vec;
      const unsigned grid = blocks(threads);
      const I n = static_cast<I>(threads);
      if (ip && vec > 1)
        max_pool_bwd_nhwc_vec<D, nn::kVecOf<D>, I, true><<<grid, kThreads, 0, stream(dev)>>>(gp, ip, xp, op, gi, n);
      else if (ip)
        max_pool_bwd<D, I, true><<<grid, kThreads, 0, stream(dev)>>>(gp, ip, xp, op, gi, n);
      else if (vec > 1)
        max_pool_bwd_nhwc_vec<D, nn::kVecOf<D>, I, false><<<grid, kThreads, 0, stream(dev)>>>(gp, ip, xp, op, gi, n);
      else
        max_pool_bwd<D, I, false><<<grid, kThreads, 0, stream(dev)>>>(gp, ip, xp, op, gi, n);
    });
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

template <bool backward, bool adaptive>
void avg_pool(OpCall& call) {
  const Tensor &in = call.in(0), &out = call.out(0);
  int dev = out.device().index;
  activate(dev);
  const Tensor& x = backward ? out : in;  // the input-plane tensor
  const Tensor& y = backward ? in : out;  // the output-plane tensor
  Geometry g = geometry(x, y, adaptive ? nullptr : &call.attrs<Pool2dAttrs>());
  HEARTH_CUDA_DISPATCH_FLOATING(in.dtype(), "avg_pool2d", [&] {
    const scalar_t* src = static_cast<const scalar_t*>(in.data_ptr());
    scalar_t* dst = static_cast<scalar_t*>(out.data_ptr());
    if constexpr (!backward && !adaptive) avg_pool_fwd<<<blocks(out.numel()), kThreads, 0, stream(dev)>>>(src, dst, g);
    if constexpr (backward && !adaptive) avg_pool_bwd<<<blocks(out.numel()), kThreads, 0, stream(dev)>>>(src, dst, g);
    if constexpr (!backward && adaptive)
      adaptive_avg_fwd<<<blocks(out.numel()), kThreads, 0, stream(dev)>>>(src, dst, g);
    if constexpr (backward && adaptive) {
      const int64_t total = out.numel();
      if (g.oh == 1 && g.ow == 1 && total < (int64_t(1) << 31))
        global_avg_bwd<scalar_t, uint32_t><<<blocks(total), kThreads, 0, stream(dev)>>>(
            src, dst, static_cast<uint32_t>(total), static_cast<uint32_t>(g.h * g.w),
            static_cast<uint32_t>(g.channels), g.nhwc);
      else
        adaptive_avg_bwd<<<blocks(total), kThreads, 0, stream(dev)>>>(src, dst, g);
    }
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

HEARTH_REGISTER_KERNEL(max_pool2d, cuda_kind(), max_pool2d, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(max_pool2d_backward, cuda_kind(), max_pool2d_backward, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(avg_pool2d, cuda_kind(), avg_pool<false, false>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(avg_pool2d_backward, cuda_kind(), avg_pool<true, false>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(adaptive_avg_pool2d, cuda_kind(), avg_pool<false, true>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(adaptive_avg_pool2d_backward, cuda_kind(), avg_pool<true, true>, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
