// 2-D pooling on CUDA with the CPU backend's contract (indices saved by the
// forward max pool; see hearth/dispatch/schemas/pooling.h), so both devices
// share one functional layer. One thread per output element forward; backward
// gathers per input element (deterministic) except max pooling, which scatters
// through its saved indices with atomics (into float for the half types).
// NHWC (channels_last) calls run the same kernels: thread i takes the i-th
// element in memory order (channel fastest, so a warp reads adjacent channels)
// and addresses the other tensor through Geometry's layout; max-pool indices
// stay the logical h * W + w within the (n, c) plane in either layout.
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/dispatch/dispatch.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/pooling.h"

namespace hearth::cuda {
namespace {

struct Geometry {
  int64_t planes, channels, h, w, oh, ow;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool count_include_pad;
  bool nhwc;
};

// An element of a [planes, hh, ww] image: its (n, c) plane and position.
struct Pos {
  int64_t plane, y, x;
};

// The i-th element in memory order of an image of hh x ww planes.
__device__ inline Pos position(const Geometry& g, int64_t i, int64_t hh, int64_t ww) {
  if (!g.nhwc) return {i / (hh * ww), (i / ww) % hh, i % ww};
  const int64_t c = i % g.channels, pix = i / g.channels;
  const int64_t n = pix / (hh * ww);
  return {n * g.channels + c, (pix / ww) % hh, pix % ww};
}

// The memory offset of (plane, y, x) in an image of hh x ww planes.
__device__ inline int64_t offset(const Geometry& g, int64_t plane, int64_t y, int64_t x, int64_t hh, int64_t ww) {
  if (!g.nhwc) return (plane * hh + y) * ww + x;
  const int64_t n = plane / g.channels, c = plane % g.channels;
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

unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

template <typename D>
__global__ void max_pool_fwd(const D* x, D* out, int64_t* idx, Geometry g) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= g.planes * g.oh * g.ow) return;
  const Pos o = position(g, i, g.oh, g.ow);
  const int64_t oh = o.y, ow = o.x;
  acc_t<D> best = 0;
  int64_t best_i = -1;
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    int64_t y = oh * g.sh - g.ph + ky * g.dh;
    if (y < 0 || y >= g.h) continue;
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      int64_t xx = ow * g.sw - g.pw + kx * g.dw;
      if (xx < 0 || xx >= g.w) continue;
      acc_t<D> v = to_acc(x[offset(g, o.plane, y, xx, g.h, g.w)]);
      if (best_i < 0 || v > best || v != v) {
        best = v;
        best_i = y * g.w + xx;
        if (v != v) break;
      }
    }
    if (best != best) break;
  }
  out[i] = from_acc<D>(best);
  idx[i] = best_i < 0 ? 0 : best_i;
}

template <typename D, typename A>
__global__ void max_pool_bwd(const D* gy, const int64_t* idx, A* gx, Geometry g) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= g.planes * g.oh * g.ow) return;
  const int64_t p = position(g, i, g.oh, g.ow).plane;
  atomicAdd(gx + offset(g, p, idx[i] / g.w, idx[i] % g.w, g.h, g.w), static_cast<A>(to_acc(gy[i])));
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
  const Pos o = position(g, i, g.oh, g.ow);
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
  const Pos at = position(g, i, g.h, g.w);
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
  const Pos o = position(g, i, g.oh, g.ow);
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
  const Pos at = position(g, i, g.h, g.w);
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

void max_pool2d(OpCall& call) {
  const Tensor &x = call.in(0), &out = call.out(0), &idx = call.out(1);
  int dev = out.device().index;
  activate(dev);
  Geometry g = geometry(x, out, &call.attrs<Pool2dAttrs>());
  HEARTH_CUDA_DISPATCH_FLOATING(x.dtype(), "max_pool2d", [&] {
    max_pool_fwd<scalar_t><<<blocks(out.numel()), kThreads, 0, stream(dev)>>>(
        static_cast<const scalar_t*>(x.data_ptr()), static_cast<scalar_t*>(out.data_ptr()),
        static_cast<int64_t*>(idx.data_ptr()), g);
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

void max_pool2d_backward(OpCall& call) {
  const Tensor &gy = call.in(0), &idx = call.in(1), &gx = call.out(0);
  int dev = gx.device().index;
  activate(dev);
  Geometry g = geometry(gx, gy, nullptr);
  // Overlapping windows add into one input cell: atomics, in float for 16-bit types.
  bool half = is_half_type(gx.dtype());
  Tensor acc = Tensor::empty(gx.shape(), half ? DType::float32 : gx.dtype(), gx.device(),
                             g.nhwc ? MemoryFormat::channels_last : MemoryFormat::contiguous);
  HEARTH_CUDA_CHECK(cudaMemsetAsync(acc.data_ptr(), 0, acc.nbytes(), stream(dev)));
  HEARTH_CUDA_DISPATCH_FLOATING(gy.dtype(), "max_pool2d_backward", [&] {
    using A = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    max_pool_bwd<scalar_t, A><<<blocks(gy.numel()), kThreads, 0, stream(dev)>>>(
        static_cast<const scalar_t*>(gy.data_ptr()), static_cast<const int64_t*>(idx.data_ptr()),
        static_cast<A*>(acc.data_ptr()), g);
  });
  HEARTH_CUDA_CHECK_LAUNCH();
  if (half)
    copy_into(gx, acc);
  else
    HEARTH_CUDA_CHECK(
        cudaMemcpyAsync(gx.data_ptr(), acc.data_ptr(), gx.nbytes(), cudaMemcpyDeviceToDevice, stream(dev)));
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
    if constexpr (backward && adaptive)
      adaptive_avg_bwd<<<blocks(out.numel()), kThreads, 0, stream(dev)>>>(src, dst, g);
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

const KernelRegistrar r1("max_pool2d", cuda_kind(), max_pool2d, DTypeSet::floating());
const KernelRegistrar r2("max_pool2d_backward", cuda_kind(), max_pool2d_backward, DTypeSet::floating());
const KernelRegistrar r3("avg_pool2d", cuda_kind(), avg_pool<false, false>, DTypeSet::floating());
const KernelRegistrar r4("avg_pool2d_backward", cuda_kind(), avg_pool<true, false>, DTypeSet::floating());
const KernelRegistrar r5("adaptive_avg_pool2d", cuda_kind(), avg_pool<false, true>, DTypeSet::floating());
const KernelRegistrar r6("adaptive_avg_pool2d_backward", cuda_kind(), avg_pool<true, true>, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
