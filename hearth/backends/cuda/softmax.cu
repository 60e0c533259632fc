// softmax / log_softmax and their backward passes on CUDA, along the middle dim
// of a dense [outer, D, inner] buffer (contracts in hearth/dispatch/schemas/softmax.h).
// Along the last dim (inner == 1, the common case) a group of threads owns a
// row, keeps it in registers when it fits and reduces with warp shuffles: one
// read and one write per element. Along another dim each thread walks one line
// and a block splits D between its threadIdx.y; neighbouring threads take
// neighbouring lines, so loads stay coalesced. Exponentials and sums in float
// (double for float64); the max is subtracted first, and an infinite max is not
// (a fully masked line comes out NaN, as on the CPU).
#include "hearth/backends/cuda/nn_util.cuh"
#include "hearth/dispatch/registry.h"

namespace hearth::cuda {
namespace {

using namespace nn;

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

template <typename D, int VEC, bool kCached, bool kLog>
__global__ void __launch_bounds__(kMaxRowThreads)
    softmax_rows_kernel(const D* __restrict__ x, D* __restrict__ y, int64_t M, int64_t K, int tpr) {
  using A = acc_t<D>;
  __shared__ A smem[32];
  const GroupPos gp = group_pos(tpr);
  for (const int64_t base : block_row_steps(M, tpr)) {
    const int64_t row = base + gp.group;
    const bool active = row < M;
    const int64_t off = (active ? row : 0) * K;
    const D* src[1] = {x + off};
    Rows<D, VEC, kCached, 1> r(src, K, gp.t, tpr, active);
    A mx = -dev_inf<A>();
    r.each([&](int64_t, A(&v)[1]) { mx = MaxOp{}(mx, v[0]); });
    mx = group_reduce1(mx, MaxOp{}, tpr, smem);
    const A shift = dev_isinf(mx) ? A(0) : mx;
    A sum = 0;
    if constexpr (kCached && !kLog) {
      r.each([&](int64_t, A(&v)[1]) {
        v[0] = dev_exp(v[0] - shift);
        sum += v[0];
      });
    } else {
      r.each([&](int64_t, A(&v)[1]) { sum += dev_exp(v[0] - shift); });
    }
    sum = group_reduce1(sum, SumOp{}, tpr, smem);
    if constexpr (kLog) {
      const A lse = dev_log(sum) + shift;
      r.store(y + off, [&](int64_t, A(&v)[1]) { return v[0] - lse; });
    } else {
      const A inv = A(1) / sum;
      if constexpr (kCached)
        r.store(y + off, [&](int64_t, A(&v)[1]) { return v[0] * inv; });
      else
        r.store(y + off, [&](int64_t, A(&v)[1]) { return dev_exp(v[0] - shift) * inv; });
    }
  }
}

// grad_x = y * (g - sum(g * y)) for softmax, g - exp(y) * sum(g) for log_softmax.
template <typename D, int VEC, bool kCached, bool kLog>
__global__ void __launch_bounds__(kMaxRowThreads)
    softmax_backward_rows_kernel(const D* __restrict__ g, const D* __restrict__ y, D* __restrict__ gx, int64_t M,
                                 int64_t K, int tpr) {
  using A = acc_t<D>;
  __shared__ A smem[32];
  const GroupPos gp = group_pos(tpr);
  for (const int64_t base : block_row_steps(M, tpr)) {
    const int64_t row = base + gp.group;
    const bool active = row < M;
    const int64_t off = (active ? row : 0) * K;
    const D* src[2] = {g + off, y + off};
    Rows<D, VEC, kCached, 2> r(src, K, gp.t, tpr, active);
    A dot = 0;
    r.each([&](int64_t, A(&v)[2]) { dot += kLog ? v[0] : v[0] * v[1]; });
    dot = group_reduce1(dot, SumOp{}, tpr, smem);
    r.store(gx + off, [&](int64_t, A(&v)[2]) { return kLog ? v[0] - dev_exp(v[1]) * dot : v[1] * (v[0] - dot); });
  }
}

template <typename D, bool kLog>
__global__ void softmax_cols_kernel(const D* __restrict__ x, D* __restrict__ y, int64_t outer, int64_t len,
                                    int64_t inner, int64_t tiles) {
  using A = acc_t<D>;
  __shared__ A smem[256];
  for (int64_t tile = blockIdx.x; tile < outer * tiles; tile += gridDim.x) {
    const int64_t o = tile / tiles, i = (tile % tiles) * blockDim.x + threadIdx.x;
    const bool active = i < inner;
    const D* xl = x + o * len * inner + (active ? i : 0);
    D* yl = y + o * len * inner + (active ? i : 0);
    A mx = -dev_inf<A>();
    if (active)
      for (int64_t d = threadIdx.y; d < len; d += blockDim.y) mx = MaxOp{}(mx, to_acc(xl[d * inner]));
    mx = column_reduce(mx, MaxOp{}, smem);
    const A shift = dev_isinf(mx) ? A(0) : mx;
    A sum = 0;
    if (active)
      for (int64_t d = threadIdx.y; d < len; d += blockDim.y) sum += dev_exp(to_acc(xl[d * inner]) - shift);
    sum = column_reduce(sum, SumOp{}, smem);
    if (!active) continue;
    if constexpr (kLog) {
      const A lse = dev_log(sum) + shift;
      for (int64_t d = threadIdx.y; d < len; d += blockDim.y) yl[d * inner] = from_acc<D>(to_acc(xl[d * inner]) - lse);
    } else {
      const A inv = A(1) / sum;
      for (int64_t d = threadIdx.y; d < len; d += blockDim.y)
        yl[d * inner] = from_acc<D>(dev_exp(to_acc(xl[d * inner]) - shift) * inv);
    }
  }
}

template <typename D, bool kLog>
__global__ void softmax_backward_cols_kernel(const D* __restrict__ g, const D* __restrict__ y, D* __restrict__ gx,
                                             int64_t outer, int64_t len, int64_t inner, int64_t tiles) {
  using A = acc_t<D>;
  __shared__ A smem[256];
  for (int64_t tile = blockIdx.x; tile < outer * tiles; tile += gridDim.x) {
    const int64_t o = tile / tiles, i = (tile % tiles) * blockDim.x + threadIdx.x;
    const bool active = i < inner;
    const int64_t base = o * len * inner + (active ? i : 0);
    A dot = 0;
    if (active)
      for (int64_t d = threadIdx.y; d < len; d += blockDim.y) {
        const A gv = to_acc(g[base + d * inner]);
        dot += kLog ? gv : gv * to_acc(y[base + d * inner]);
      }
    dot = column_reduce(dot, SumOp{}, smem);
    if (!active) continue;
    for (int64_t d = threadIdx.y; d < len; d += blockDim.y) {
      const int64_t k = base + d * inner;
      const A gv = to_acc(g[k]), yv = to_acc(y[k]);
      gx[k] = from_acc<D>(kLog ? gv - dev_exp(yv) * dot : yv * (gv - dot));
    }
  }
}

template <bool kLog>
void softmax_forward(OpCall& call) {
  const Tensor &x = call.in(0), &y = call.out(0);
  const int device = x.device().index;
  activate(device);
  const cudaStream_t s = stream(device);
  const int64_t outer = x.shape()[0], len = x.shape()[1], inner = x.shape()[2];
  if (x.numel() == 0) return;
  HEARTH_CUDA_DISPATCH_FLOATING(x.dtype(), kLog ? "log_softmax" : "softmax", [&] {
    using D = scalar_t;
    const D* xp = static_cast<const D*>(x.data_ptr());
    D* yp = static_cast<D*>(y.data_ptr());
    if (inner == 1) {
      const RowPlan p = plan_rows(outer, len, sizeof(D), sizeof(acc_t<D>), {xp, yp}, device, true);
      with_row_layout<D>(p, [&](auto vec, auto cached) {
        softmax_rows_kernel<D, decltype(vec)::value, decltype(cached)::value, kLog>
            <<<p.blocks, p.threads, 0, s>>>(xp, yp, outer, len, p.tpr);
      });
    } else {
      const ColPlan p = plan_cols(outer, len, inner, device);
      softmax_cols_kernel<D, kLog><<<p.blocks, p.block, 0, s>>>(xp, yp, outer, len, inner, p.tiles);
    }
    HEARTH_CUDA_CHECK_LAUNCH();
  });
}

template <bool kLog>
void softmax_backward(OpCall& call) {
  const Tensor &g = call.in(0), &y = call.in(1), &gx = call.out(0);
  const int device = y.device().index;
  activate(device);
  const cudaStream_t s = stream(device);
  const int64_t outer = y.shape()[0], len = y.shape()[1], inner = y.shape()[2];
  if (y.numel() == 0) return;
  HEARTH_CUDA_DISPATCH_FLOATING(y.dtype(), kLog ? "log_softmax_backward" : "softmax_backward", [&] {
    using D = scalar_t;
    const D* gp = static_cast<const D*>(g.data_ptr());
    const D* yp = static_cast<const D*>(y.data_ptr());
    D* op = static_cast<D*>(gx.data_ptr());
    if (inner == 1) {
      const RowPlan p = plan_rows(outer, len, sizeof(D), sizeof(acc_t<D>), {gp, yp, op}, device, true);
      with_row_layout<D>(p, [&](auto vec, auto cached) {
        softmax_backward_rows_kernel<D, decltype(vec)::value, decltype(cached)::value, kLog>
            <<<p.blocks, p.threads, 0, s>>>(gp, yp, op, outer, len, p.tpr);
      });
    } else {
      const ColPlan p = plan_cols(outer, len, inner, device);
      softmax_backward_cols_kernel<D, kLog><<<p.blocks, p.block, 0, s>>>(gp, yp, op, outer, len, inner, p.tiles);
    }
    HEARTH_CUDA_CHECK_LAUNCH();
  });
}

HEARTH_REGISTER_KERNEL(softmax, cuda_kind(), softmax_forward<false>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(log_softmax, cuda_kind(), softmax_forward<true>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(softmax_backward, cuda_kind(), softmax_backward<false>, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(log_softmax_backward, cuda_kind(), softmax_backward<true>, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
