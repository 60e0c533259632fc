// 2-D pooling on CUDA with the CPU backend's contract (indices saved by the
// forward max pool; see hearth/dispatch/schemas/pooling.h), so both devices
// share one functional layer. One thread per output element forward; backward
// gathers per input element (deterministic) except max pooling, which scatters
// through its saved indices with atomics (into float for the half types).
#include "hearth/backends/cuda/loops.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/pooling.h"
#include "hearth/dispatch/dispatch.h"

namespace hearth::cuda {
namespace {

struct Geometry {
  int64_t planes, h, w, oh, ow;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool count_include_pad;
};

Geometry geometry(const Tensor& x, const Tensor& out, const Pool2dAttrs* a) {
  Geometry g{};
  g.planes = x.size(0) * x.size(1);
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
  int64_t ow = i % g.ow, oh = (i / g.ow) % g.oh, p = i / (g.ow * g.oh);
  const D* plane = x + p * g.h * g.w;
  acc_t<D> best = 0;
  int64_t best_i = -1;
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    int64_t y = oh * g.sh - g.ph + ky * g.dh;
    if (y < 0 || y >= g.h) continue;
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      int64_t xx = ow * g.sw - g.pw + kx * g.dw;
      if (xx < 0 || xx >= g.w) continue;
      acc_t<D> v = to_acc(plane[y * g.w + xx]);
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
  int64_t p = i / (g.ow * g.oh);
  atomicAdd(gx + p * g.h * g.w + idx[i], static_cast<A>(to_acc(gy[i])));
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
  int64_t ow = i % g.ow, oh = (i / g.ow) % g.oh, p = i / (g.ow * g.oh);
  const D* plane = x + p * g.h * g.w;
  int64_t y0 = oh * g.sh - g.ph, x0 = ow * g.sw - g.pw;
  acc_t<D> s = 0;
  for (int64_t y = max(y0, int64_t(0)); y < min(y0 + g.kh, g.h); ++y)
    for (int64_t xx = max(x0, int64_t(0)); xx < min(x0 + g.kw, g.w); ++xx) s += to_acc(plane[y * g.w + xx]);
  int64_t div = avg_divisor(g, oh, ow);
  out[i] = from_acc<D>(div > 0 ? s / static_cast<acc_t<D>>(div) : acc_t<D>(0));
}

template <typename D>
__global__ void avg_pool_bwd(const D* gy, D* gx, Geometry g) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= g.planes * g.h * g.w) return;
  int64_t xx = i % g.w, y = (i / g.w) % g.h, p = i / (g.w * g.h);
  const D* plane = gy + p * g.oh * g.ow;
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
      if (div > 0) s += to_acc(plane[oh * g.ow + ow]) / static_cast<acc_t<D>>(div);
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
  int64_t ow = i % g.ow, oh = (i / g.ow) % g.oh, p = i / (g.ow * g.oh);
  const D* plane = x + p * g.h * g.w;
  int64_t y0 = adaptive_start(oh, g.h, g.oh), y1 = adaptive_end(oh, g.h, g.oh);
  int64_t x0 = adaptive_start(ow, g.w, g.ow), x1 = adaptive_end(ow, g.w, g.ow);
  acc_t<D> s = 0;
  for (int64_t y = y0; y < y1; ++y)
    for (int64_t xx = x0; xx < x1; ++xx) s += to_acc(plane[y * g.w + xx]);
  out[i] = from_acc<D>(s / static_cast<acc_t<D>>((y1 - y0) * (x1 - x0)));
}

template <typename D>
__global__ void adaptive_avg_bwd(const D* gy, D* gx, Geometry g) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= g.planes * g.h * g.w) return;
  int64_t xx = i % g.w, y = (i / g.w) % g.h, p = i / (g.w * g.h);
  const D* plane = gy + p * g.oh * g.ow;
  acc_t<D> s = 0;
  for (int64_t oh = (y * g.oh) / g.h; oh < g.oh && adaptive_start(oh, g.h, g.oh) <= y; ++oh) {
    int64_t y0 = adaptive_start(oh, g.h, g.oh), y1 = adaptive_end(oh, g.h, g.oh);
    if (y >= y1) continue;
    for (int64_t ow = (xx * g.ow) / g.w; ow < g.ow && adaptive_start(ow, g.w, g.ow) <= xx; ++ow) {
      int64_t x0 = adaptive_start(ow, g.w, g.ow), x1 = adaptive_end(ow, g.w, g.ow);
      if (xx >= x1) continue;
      s += to_acc(plane[oh * g.ow + ow]) / static_cast<acc_t<D>>((y1 - y0) * (x1 - x0));
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
  Tensor acc = Tensor::empty(gx.shape(), half ? DType::float32 : gx.dtype(), gx.device());
  HEARTH_CUDA_CHECK(cudaMemsetAsync(acc.data_ptr(), 0, acc.nbytes(), stream(dev)));
  HEARTH_CUDA_DISPATCH_FLOATING(gy.dtype(), "max_pool2d_backward", [&] {
    using A = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    max_pool_bwd<scalar_t, A><<<blocks(gy.numel()), kThreads, 0, stream(dev)>>>(
        static_cast<const scalar_t*>(gy.data_ptr()), static_cast<const int64_t*>(idx.data_ptr()),
        static_cast<A*>(acc.data_ptr()), g);
  });
  HEARTH_CUDA_CHECK_LAUNCH();
  if (half) copy_into(gx, acc);
  else HEARTH_CUDA_CHECK(cudaMemcpyAsync(gx.data_ptr(), acc.data_ptr(), gx.nbytes(), cudaMemcpyDeviceToDevice, stream(dev)));
}

template <bool backward, bool adaptive>
void avg_pool(OpCall& call) {
  const Tensor &in = call.in(0), &out = call.out(0);
  int dev = out.device().index;
  activate(dev);
  const Tensor& x = backward ? out : in;   // the input-plane tensor
  const Tensor& y = backward ? in : out;   // the output-plane tensor
  Geometry g = geometry(x, y, adaptive ? nullptr : &call.attrs<Pool2dAttrs>());
  HEARTH_CUDA_DISPATCH_FLOATING(in.dtype(), "avg_pool2d", [&] {
    const scalar_t* src = static_cast<const scalar_t*>(in.data_ptr());
    scalar_t* dst = static_cast<scalar_t*>(out.data_ptr());
    if constexpr (!backward && !adaptive) avg_pool_fwd<<<blocks(out.numel()), kThreads, 0, stream(dev)>>>(src, dst, g);
    if constexpr (backward && !adaptive) avg_pool_bwd<<<blocks(out.numel()), kThreads, 0, stream(dev)>>>(src, dst, g);
    if constexpr (!backward && adaptive) adaptive_avg_fwd<<<blocks(out.numel()), kThreads, 0, stream(dev)>>>(src, dst, g);
    if constexpr (backward && adaptive) adaptive_avg_bwd<<<blocks(out.numel()), kThreads, 0, stream(dev)>>>(src, dst, g);
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
