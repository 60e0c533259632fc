// Max pooling on CUDA with the CPU backend's contract (schemas/pooling.h).
// The forward takes one thread per output element (or, on NHWC rows of C
// channels that are 16-byte aligned, 16 bytes of channels of one pixel) and
// saves, where windows overlap, the argmax's place in its window. The
// backward gathers: one thread per input cell adds, in a fixed order, the
// gradient of each candidate output whose argmax (saved, or found again in x
// with the forward's own function) is this cell, and writes the cell once in
// the tensor's dtype: no zeroing pass, no atomics, the same result on every
// run. Windows that tile the input take one thread per output instead.
#include "hearth/backends/cuda/nn_util.cuh"
#include "hearth/backends/cuda/pooling_geometry.cuh"
#include "hearth/dispatch/dispatch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cuda {
namespace {

using namespace pooling;

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

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

HEARTH_REGISTER_KERNEL(max_pool2d, cuda_kind(), max_pool2d, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(max_pool2d_backward, cuda_kind(), max_pool2d_backward, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
