// Layer norm on CUDA (contract in hearth/dispatch/schemas/layer_norm.h): a group of
// threads per row keeps the row in registers (one read, one write) with an
// exact two-pass variance; weight and bias gradients are column sums over
// fixed row chunks, then summed in order.
#include "hearth/backends/cuda/layer_norm_params.cuh"
#include "hearth/backends/cuda/nn_util.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/layer_norm.h"

namespace hearth::cuda {
namespace {

using namespace nn;

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

// ---- layer norm: x [M, K], statistics per row ----

template <typename D, int VEC, bool kCached>
__global__ void __launch_bounds__(kMaxRowThreads)
    layer_norm_kernel(const D* __restrict__ x, Param<D> w, Param<D> b, D* __restrict__ y, acc_t<D>* mean_out,
                      acc_t<D>* rstd_out, int64_t M, int64_t K, acc_t<D> eps, int tpr) {
  using A = acc_t<D>;
  __shared__ A smem[32];
  const GroupPos gp = group_pos(tpr);
  for (const int64_t base : block_row_steps(M, tpr)) {
    const int64_t row = base + gp.group;
    const bool active = row < M;
    const int64_t off = (active ? row : 0) * K;
    const D* src[1] = {x + off};
    Rows<D, VEC, kCached, 1> r(src, K, gp.t, tpr, active);
    A sum = 0;
    r.each([&](int64_t, A(&v)[1]) { sum += v[0]; });
    const A mean = group_reduce1(sum, SumOp{}, tpr, smem) / static_cast<A>(K);
    A ss = 0;
    r.each([&](int64_t, A(&v)[1]) {
      const A d = v[0] - mean;
      ss += d * d;
    });
    const A var = group_reduce1(ss, SumOp{}, tpr, smem) / static_cast<A>(K);
    const A rstd = A(1) / dev_sqrt(var + eps);
    if (active && gp.t == 0) {
      mean_out[row] = mean;
      rstd_out[row] = rstd;
    }
    r.store(y + off, [&](int64_t col, A(&v)[1]) { return (v[0] - mean) * rstd * w.get(col, 1) + b.get(col, 0); });
  }
}

template <typename D, int VEC, bool kCached>
__global__ void __launch_bounds__(kMaxRowThreads)
    layer_norm_backward_kernel(const D* __restrict__ g, const D* __restrict__ x, const acc_t<D>* __restrict__ mean,
                               const acc_t<D>* __restrict__ rstd, Param<D> w, D* __restrict__ gx, int64_t M, int64_t K,
                               int tpr) {
  using A = acc_t<D>;
  __shared__ A smem[64];
  const GroupPos gp = group_pos(tpr);
  for (const int64_t base : block_row_steps(M, tpr)) {
    const int64_t row = base + gp.group;
    const bool active = row < M;
    const int64_t off = (active ? row : 0) * K;
    const A m = active ? mean[row] : A(0), rs = active ? rstd[row] : A(0);
    const D* src[2] = {g + off, x + off};
    Rows<D, VEC, kCached, 2> r(src, K, gp.t, tpr, active);
    A sums[2] = {0, 0};  // of g w and g w xhat
    r.each([&](int64_t col, A(&v)[2]) {
      const A gw = v[0] * w.get(col, 1);
      sums[0] += gw;
      sums[1] += gw * ((v[1] - m) * rs);
    });
    group_reduce<2>(sums, SumOp{}, tpr, smem);
    const A mean_gw = sums[0] / static_cast<A>(K), mean_gwx = sums[1] / static_cast<A>(K);
    r.store(gx + off,
            [&](int64_t col, A(&v)[2]) { return rs * (v[0] * w.get(col, 1) - mean_gw - (v[1] - m) * rs * mean_gwx); });
  }
}

void layer_norm_forward(OpCall& call) {
  const Tensor& x = call.in(0);
  const Tensor &y = call.out(0), &mean = call.out(1), &rstd = call.out(2);
  const double eps = call.attrs<LayerNormAttrs>().eps;
  const int device = x.device().index;
  activate(device);
  const cudaStream_t s = stream(device);
  const int64_t M = x.shape()[0], K = x.shape()[1];
  if (M == 0 || K == 0) return;
  HEARTH_CUDA_DISPATCH_FLOATING(x.dtype(), "layer_norm", [&] {
    using D = scalar_t;
    using A = acc_t<D>;
    const D* xp = static_cast<const D*>(x.data_ptr());
    D* yp = static_cast<D*>(y.data_ptr());
    const RowPlan p = plan_rows(M, K, sizeof(D), sizeof(A), {xp, yp}, device, true);
    with_row_layout<D>(p, [&](auto vec, auto cached) {
      layer_norm_kernel<D, decltype(vec)::value, decltype(cached)::value><<<p.blocks, p.threads, 0, s>>>(
          xp, param<D>(call.in(1)), param<D>(call.in(2)), yp, static_cast<A*>(mean.data_ptr()),
          static_cast<A*>(rstd.data_ptr()), M, K, static_cast<A>(eps), p.tpr);
    });
    HEARTH_CUDA_CHECK_LAUNCH();
  });
}

void layer_norm_backward(OpCall& call) {
  const Tensor &g = call.in(0), &x = call.in(1), &mean = call.in(2), &rstd = call.in(3);
  const Tensor &gx = call.out(0), &gw = call.out(1), &gb = call.out(2);
  const Device dev = x.device();
  activate(dev.index);
  const cudaStream_t s = stream(dev.index);
  const int64_t M = x.shape()[0], K = x.shape()[1];
  if (M == 0 || K == 0) return;
  HEARTH_CUDA_DISPATCH_FLOATING(x.dtype(), "layer_norm_backward", [&] {
    using D = scalar_t;
    using A = acc_t<D>;
    const D* gp = static_cast<const D*>(g.data_ptr());
    const D* xp = static_cast<const D*>(x.data_ptr());
    const A* mp = static_cast<const A*>(mean.data_ptr());
    const A* rp = static_cast<const A*>(rstd.data_ptr());
    if (gx.defined()) {
      D* op = static_cast<D*>(gx.data_ptr());
      const RowPlan p = plan_rows(M, K, sizeof(D), sizeof(A), {gp, xp, op}, dev.index, true);
      with_row_layout<D>(p, [&](auto vec, auto cached) {
        layer_norm_backward_kernel<D, decltype(vec)::value, decltype(cached)::value>
            <<<p.blocks, p.threads, 0, s>>>(gp, xp, mp, rp, param<D>(call.in(4)), op, M, K, p.tpr);
      });
      HEARTH_CUDA_CHECK_LAUNCH();
    }
    if (!gw.defined() && !gb.defined()) return;
    const int64_t col_tiles = (K + 31) / 32;
    const int64_t target_blocks = static_cast<int64_t>(sm_count(dev.index)) * 8;
    const int64_t chunks =
        std::clamp<int64_t>((target_blocks + col_tiles - 1) / col_tiles, 1, std::min<int64_t>(1024, (M + 7) / 8));
    Tensor partials = Tensor::empty({2, chunks, K}, mean.dtype(), dev);
    A* pp = static_cast<A*>(partials.data_ptr());
    layer_norm_param_partials_kernel<D>
        <<<dim3(static_cast<unsigned>(col_tiles), static_cast<unsigned>(chunks)), dim3(32, 8), 0, s>>>(gp, xp, mp, rp,
                                                                                                       M, K, pp);
    HEARTH_CUDA_CHECK_LAUNCH();
    layer_norm_param_final_kernel<D><<<channel_blocks(K), 256, 0, s>>>(pp, chunks, K, param<D>(gw), param<D>(gb));
    HEARTH_CUDA_CHECK_LAUNCH();
  });
}

HEARTH_REGISTER_KERNEL(layer_norm, cuda_kind(), layer_norm_forward, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(layer_norm_backward, cuda_kind(), layer_norm_backward, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
