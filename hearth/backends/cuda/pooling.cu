// Average and adaptive average pooling on CUDA with the CPU backend's
// contract (schemas/pooling.h): one thread per output element forward and one
// per input cell backward, which gathers from the outputs whose windows hold
// it, in a fixed order, and writes the cell once (no zeroing pass, no
// atomics). NHWC (channels_last) calls run the same kernels: thread i takes
// the i-th element in memory order (channel fastest, so a warp reads adjacent
// channels) and addresses the other tensor through the geometry's layout.
// Max pooling is max_pool.cu.
#include "hearth/backends/cuda/pooling_geometry.cuh"
#include "hearth/dispatch/dispatch.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cuda {
namespace {

using namespace pooling;

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

HEARTH_REGISTER_KERNEL(avg_pool2d, cuda_kind(), avg_pool<false, false>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(avg_pool2d_backward, cuda_kind(), avg_pool<true, false>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(adaptive_avg_pool2d, cuda_kind(), avg_pool<false, true>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(adaptive_avg_pool2d_backward, cuda_kind(), avg_pool<true, true>, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
