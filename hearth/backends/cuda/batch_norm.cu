// Batch norm on CUDA (contract in hearth/dispatch/schemas/batch_norm.h).
//
// Batch norm uses our own fused per-channel kernels, not cuDNN: cuDNN 9's
// batch-norm entry points (cudnnBatchNormalizationForwardTraining and friends)
// are deprecated, and they want weight, bias and running statistics all
// present and all in float (double for float64 input), so optional affine
// parameters and bfloat16/float16 parameters beside half activations would need
// extra copies. Ours take every dtype combination the schema allows, update the
// running statistics exactly as the CPU and PyTorch do (unbiased variance,
// r = (1 - momentum) r + momentum batch) and sum in a fixed order, so results do
// not change from run to run.
//
// Batch norm: a partial-sum kernel splits each channel's N x S elements between
// blocks (shifted sums: x minus the channel's first element, so a large mean
// does not swamp the variance), a per-channel kernel merges the partials in
// double and turns them into mean, invstd, running statistics and an affine
// map, and a row kernel applies it. Backward reuses the same partial-sum kernel
// for sum(g) and sum(g (x - mean)), then applies a per-channel map too: two
// passes over the data each way, the fewest the statistics allow.
// Inputs whose channels are fastest ([N, C], and NHWC images as [N*H*W, C])
// have kernels of their own: a thread owns 16 bytes of adjacent channels,
// keeps their sums or maps in registers, and walks rows with four loads in
// flight, so a warp reads contiguous memory and every SM is busy however few
// channels there are. The sums' order depends only on the shape and the
// device's SM count, never on timing.
// A fused ReLU (BatchNormAttrs::relu) clips the output in the apply kernels
// and, backward, masks grad_y by the saved output inside the partial-sum and
// apply kernels, so relu(batch_norm(x)) reads and writes no more than
// batch_norm alone, plus one read of the output in each backward pass.
// A residual (ResNet's relu(bn(conv(out)) + shortcut)) is one more read in the
// forward apply kernels. Backward, the partial-sum pass writes the residual's
// gradient, the masked grad_y, as it reads it; the apply pass then reads that
// in place of grad_y and the output. Over plain batch norm, the add and the
// ReLU then cost three passes over the tensor (the residual's read forward,
// the output's read and the residual gradient's write backward), against
// eight as separate kernels (add and relu forward, relu_backward).
// Channels-fastest tensors small enough to stay in L2 run each way as one
// cooperative kernel instead (batch_norm_single_kernel.cu: the same partial
// sums, a grid-wide sync, the merge, a second sync, the apply), which saves
// the kernel boundaries and tails that dominate small batch norms.
#include <type_traits>

#include "hearth/backends/cuda/batch_norm_maps.cuh"
#include "hearth/backends/cuda/batch_norm_partials.cuh"
#include "hearth/backends/cuda/batch_norm_single_kernel.h"
#include "hearth/backends/cuda/nn_util.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/batch_norm.h"

namespace hearth::cuda {
namespace {

using namespace nn;
using namespace batch_norm_detail;

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

// Per channel: batch (or running) statistics, running-statistic update, and the
// affine map y = x * scale + shift, all in double (finalize_channel).
template <typename D>
__global__ void batch_norm_finalize_kernel(PartialSums<acc_t<D>> partials, const D* __restrict__ x, BnFinalizeArgs a,
                                           Param<D> rm, Param<D> rv, Param<D> w, Param<D> b, acc_t<D>* mean_out,
                                           acc_t<D>* invstd_out, acc_t<D>* affine, int64_t* num_batches_tracked) {
  __shared__ double smem[kFinalizeLanes][2][32];
  if (num_batches_tracked && blockIdx.x == 0 && threadIdx.x == 0 && threadIdx.y == 0) ++*num_batches_tracked;
  for (int64_t c0 = static_cast<int64_t>(blockIdx.x) * kFinalizeChannels; c0 < a.C;
       c0 += static_cast<int64_t>(gridDim.x) * kFinalizeChannels) {
    const int64_t c = c0 + threadIdx.x;
    double s0 = 0, s1 = 0;
    if (a.training) partials.block_sum(c, c < a.C, s0, s1, smem);
    if (threadIdx.y != 0 || c >= a.C) continue;
    finalize_channel<D>(c, s0, s1, x, a, rm, rv, w, b, mean_out, invstd_out, affine);
  }
}

// y = x * affine[c] + affine[C + c] over rows (n, c) of S elements (plus the
// residual with kResidual, then the fused ReLU when asked).
template <typename D, int VEC, bool kResidual>
__global__ void __launch_bounds__(kMaxRowThreads)
    batch_norm_apply_kernel(const D* __restrict__ x, const D* __restrict__ res, D* __restrict__ y,
                            const acc_t<D>* __restrict__ affine, int64_t R, int64_t C, int64_t S, int tpr, bool relu) {
  using A = acc_t<D>;
  constexpr int kInputs = kResidual ? 2 : 1;
  const GroupPos gp = group_pos(tpr);
  for (int64_t row : group_rows(R, tpr, gp)) {
    const int64_t c = row % C;
    const A scale = affine[c], shift = affine[C + c];
    const D* src[kInputs];
    src[0] = x + row * S;
    if constexpr (kResidual) src[kInputs - 1] = res + row * S;
    Rows<D, VEC, false, kInputs> r(src, S, gp.t, tpr, true);
    r.store(y + row * S, [&](int64_t, A(&v)[kInputs]) {
      const A bn = bn_value(v[0], scale, shift);
      return bn_out<D>(kResidual ? plus_residual<D>(bn, v[kInputs - 1]) : bn, relu);
    });
  }
}

// Per channel: grad_weight, grad_bias and the map grad_x = k g + b (x - mean) + d,
// stored as coef[0..3][C] = k, b, mean, d (grad_finalize_channel).
template <typename D>
__global__ void batch_norm_grad_finalize_kernel(PartialSums<acc_t<D>> partials, int64_t C, double count, bool training,
                                                const acc_t<D>* __restrict__ mean, const acc_t<D>* __restrict__ invstd,
                                                Param<D> w, Param<D> gw, Param<D> gb, acc_t<D>* coef) {
  __shared__ double smem[kFinalizeLanes][2][32];
  for (int64_t c0 = static_cast<int64_t>(blockIdx.x) * kFinalizeChannels; c0 < C;
       c0 += static_cast<int64_t>(gridDim.x) * kFinalizeChannels) {
    const int64_t c = c0 + threadIdx.x;
    double sg = 0, sgx = 0;
    if (partials.p) partials.block_sum(c, c < C, sg, sgx, smem);
    if (threadIdx.y != 0 || c >= C) continue;
    grad_finalize_channel<D>(c, sg, sgx, C, count, training, mean, invstd, w, gw, gb, coef);
  }
}

// grad_x = k g + b (x - mean) + d over rows (n, c) of S elements; g is masked
// by the fused ReLU first (M; with a saved mask the output is a third input).
template <typename D, int VEC, MaskKind M>
__global__ void __launch_bounds__(kMaxRowThreads)
    batch_norm_grad_apply_kernel(const D* __restrict__ g, const D* __restrict__ x, ReluMask<D> mask,
                                 D* __restrict__ gx, const acc_t<D>* __restrict__ coef, int64_t R, int64_t C, int64_t S,
                                 int tpr) {
  using A = acc_t<D>;
  const GroupPos gp = group_pos(tpr);
  for (int64_t row : group_rows(R, tpr, gp)) {
    const int64_t c = row % C;
    const A k = coef[c], b = coef[C + c], m = coef[2 * C + c], d = coef[3 * C + c];
    const A mscale = M == MaskKind::from_x ? mask.affine[c] : A(0);
    const A mshift = M == MaskKind::from_x ? mask.affine[C + c] : A(0);
    constexpr int kInputs = M == MaskKind::saved ? 3 : 2;
    const D* src[kInputs];
    src[0] = g + row * S;
    src[1] = x + row * S;
    if constexpr (M == MaskKind::saved) src[kInputs - 1] = mask.y + row * S;
    Rows<D, VEC, false, kInputs> r(src, S, gp.t, tpr, true);
    r.store(gx + row * S, [&](int64_t, A(&v)[kInputs]) {
      const A gv = relu_grad<D, M>(v[0], v[kInputs - 1], v[1], mscale, mshift);
      return bn_grad_value(k, gv, b, v[1] - m, d);
    });
  }
}

// S == 1, tiled as row_partials_kernel: a thread keeps the maps of its VEC
// channels in registers and walks every gridDim.y * blockDim.y-th row, four in
// flight. y = x * affine[c] + affine[C + c] (plus the residual with kResidual).
template <typename D, int VEC, bool kResidual>
__global__ void __launch_bounds__(256)
    batch_norm_apply_rows_kernel(const D* __restrict__ x, const D* __restrict__ res, D* __restrict__ y,
                                 const acc_t<D>* __restrict__ affine, int64_t R, int64_t C, bool relu) {
  using P = Pack<D, VEC>;
  constexpr int kInFlight = 4;
  const int64_t c0 = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * VEC;
  if (c0 >= C) return;
  const AffinePack<D, VEC> map(affine, C, c0);
  auto apply = [&](const P& in, const P& rin) { return map.template apply<kResidual>(in, rin, relu); };
  const int64_t step = static_cast<int64_t>(gridDim.y) * blockDim.y;
  int64_t r = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  for (; r + (kInFlight - 1) * step < R; r += kInFlight * step) {
    P v[kInFlight], rv[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      v[u] = *reinterpret_cast<const P*>(x + (r + u * step) * C + c0);
      if constexpr (kResidual)
        rv[u] = *reinterpret_cast<const P*>(res + (r + u * step) * C + c0);
      else
        rv[u] = v[u];
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) *reinterpret_cast<P*>(y + (r + u * step) * C + c0) = apply(v[u], rv[u]);
  }
  for (; r < R; r += step) {
    const P v = *reinterpret_cast<const P*>(x + r * C + c0);
    P rv = v;
    if constexpr (kResidual) rv = *reinterpret_cast<const P*>(res + r * C + c0);
    *reinterpret_cast<P*>(y + r * C + c0) = apply(v, rv);
  }
}

// S == 1: grad_x = k g + b (x - mean) + d, coef and mask as batch_norm_grad_apply_kernel's.
template <typename D, int VEC, MaskKind M>
__global__ void __launch_bounds__(256)
    batch_norm_grad_apply_rows_kernel(const D* __restrict__ g, const D* __restrict__ x, ReluMask<D> mask,
                                      D* __restrict__ gx, const acc_t<D>* __restrict__ coef, int64_t R, int64_t C) {
  using P = Pack<D, VEC>;
  constexpr int kInFlight = 4;
  const int64_t c0 = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * VEC;
  if (c0 >= C) return;
  const GradPack<D, VEC, M> map(coef, mask, C, c0);
  auto apply = [&](const P& gv, const P& xv, const P& mv) { return map.apply(gv, xv, mv); };
  const int64_t step = static_cast<int64_t>(gridDim.y) * blockDim.y;
  int64_t r = static_cast<int64_t>(blockIdx.y) * blockDim.y + threadIdx.y;
  for (; r + (kInFlight - 1) * step < R; r += kInFlight * step) {
    P gv[kInFlight], xv[kInFlight], mv[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      gv[u] = *reinterpret_cast<const P*>(g + (r + u * step) * C + c0);
      xv[u] = *reinterpret_cast<const P*>(x + (r + u * step) * C + c0);
      if constexpr (M == MaskKind::saved)
        mv[u] = *reinterpret_cast<const P*>(mask.y + (r + u * step) * C + c0);
      else
        mv[u] = gv[u];
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u)
      *reinterpret_cast<P*>(gx + (r + u * step) * C + c0) = apply(gv[u], xv[u], mv[u]);
  }
  for (; r < R; r += step) {
    const P gv = *reinterpret_cast<const P*>(g + r * C + c0);
    P mv = gv;
    if constexpr (M == MaskKind::saved) mv = *reinterpret_cast<const P*>(mask.y + r * C + c0);
    *reinterpret_cast<P*>(gx + r * C + c0) = apply(gv, *reinterpret_cast<const P*>(x + r * C + c0), mv);
  }
}

void batch_norm_forward(OpCall& call) {
  const Tensor& x = call.in(0);
  const BatchNormAttrs& at = call.attrs<BatchNormAttrs>();
  const Tensor &y = call.out(0), &mean = call.out(1), &invstd = call.out(2);
  const Device dev = x.device();
  activate(dev.index);
  const cudaStream_t s = stream(dev.index);
  const int64_t N = x.shape()[0], C = x.shape()[1], S = x.shape()[2];
  if (C == 0) return;
  if (batch_norm_forward_single_kernel(call)) return;
  HEARTH_CUDA_DISPATCH_FLOATING(x.dtype(), "batch_norm", [&] {
    using D = scalar_t;
    using A = acc_t<D>;
    const D* xp = static_cast<const D*>(x.data_ptr());
    const D* rp = call.in(5).defined() ? static_cast<const D*>(call.in(5).data_ptr()) : nullptr;  // the residual
    Partials partials;
    if (at.training)
      partials =
          channel_partials<D, MaskKind::none>(xp, nullptr, ReluMask<D>{}, nullptr, N, C, S, StatsTerms<D>{xp, S},
                                              mean.dtype(), dev, s);
    // The map goes to output 3 where it is wanted (backward's ReLU mask).
    Tensor affine = call.out(3).defined() ? call.out(3) : Tensor::empty({2, C}, mean.dtype(), dev);
    const BnFinalizeArgs args{C, S, static_cast<double>(N * S), at.momentum, at.eps, at.training};
    batch_norm_finalize_kernel<D><<<finalize_blocks(C), finalize_block(), 0, s>>>(
        partials.view<A>(C), xp, args, param<D>(call.in(1)), param<D>(call.in(2)), param<D>(call.in(3)),
        param<D>(call.in(4)), static_cast<A*>(mean.data_ptr()), static_cast<A*>(invstd.data_ptr()),
        static_cast<A*>(affine.data_ptr()),
        at.training && call.in(6).defined() ? static_cast<int64_t*>(call.in(6).data_ptr()) : nullptr);
    HEARTH_CUDA_CHECK_LAUNCH();
    if (x.numel() == 0) return;
    D* yp = static_cast<D*>(y.data_ptr());
    const A* ap = static_cast<const A*>(affine.data_ptr());
    if (S == 1) {
      const int vec = row_vector<D>(C, {xp, rp, yp});
      const RowTiles t = plan_row_tiles(N, C, vec, dev.index, 8);
      with_row_vector<D>(vec, [&](auto v) {
        const dim3 grid(t.col_tiles, t.row_blocks);
        if (rp)
          batch_norm_apply_rows_kernel<D, decltype(v)::value, true>
              <<<grid, t.block, 0, s>>>(xp, rp, yp, ap, N, C, at.relu);
        else
          batch_norm_apply_rows_kernel<D, decltype(v)::value, false>
              <<<grid, t.block, 0, s>>>(xp, rp, yp, ap, N, C, at.relu);
      });
    } else {
      const RowPlan p = plan_rows(N * C, S, sizeof(D), sizeof(A), {xp, rp, yp}, dev.index, false);
      auto launch = [&](auto vec, auto residual) {
        batch_norm_apply_kernel<D, decltype(vec)::value, decltype(residual)::value>
            <<<p.blocks, p.threads, 0, s>>>(xp, rp, yp, ap, N * C, C, S, p.tpr, at.relu);
      };
      if (p.vec && rp)
        launch(IntTag<kVecOf<D>>{}, BoolTag<true>{});
      else if (p.vec)
        launch(IntTag<kVecOf<D>>{}, BoolTag<false>{});
      else if (rp)
        launch(IntTag<1>{}, BoolTag<true>{});
      else
        launch(IntTag<1>{}, BoolTag<false>{});
    }
    HEARTH_CUDA_CHECK_LAUNCH();
  });
}

void batch_norm_backward(OpCall& call) {
  const Tensor &g = call.in(0), &x = call.in(1), &mean = call.in(2), &invstd = call.in(3);
  const Tensor &gx = call.out(0), &gw = call.out(1), &gb = call.out(2), &gr = call.out(3);
  const bool training = call.attrs<BatchNormAttrs>().training, relu = call.attrs<BatchNormAttrs>().relu;
  const Device dev = x.device();
  activate(dev.index);
  const cudaStream_t s = stream(dev.index);
  const int64_t N = x.shape()[0], C = x.shape()[1], S = x.shape()[2];
  if (C == 0) return;
  if (batch_norm_backward_single_kernel(call)) return;
  HEARTH_CUDA_DISPATCH_FLOATING(x.dtype(), "batch_norm_backward", [&] {
    using D = scalar_t;
    using A = acc_t<D>;
    const D* gp = static_cast<const D*>(g.data_ptr());
    const D* xp = static_cast<const D*>(x.data_ptr());
    const A* mp = static_cast<const A*>(mean.data_ptr());
    // The residual's gradient, the masked grad_y, is written by the partial-sum
    // pass (which then runs even where no sum is wanted: it is the one pass).
    D* rp = gr.defined() ? static_cast<D*>(gr.data_ptr()) : nullptr;
    // The fused ReLU's mask: recomputed from x and the forward's map, or, with
    // a residual (the output depends on it too), read off the saved output.
    ReluMask<D> mask;
    MaskKind kind = backward_relu_mask<D>(call, relu, rp != nullptr, mask);
    auto with_mask = [&](auto&& launch) { with_mask_kind(kind, launch); };
    Partials partials;
    if (N * S > 0 && (gw.defined() || gb.defined() || (gx.defined() && training) || rp))
      with_mask([&](auto m) {
        partials = channel_partials<D, decltype(m)::value>(gp, xp, mask, rp, N, C, S, GradTerms<D>{mp}, mean.dtype(),
                                                           dev, s);
      });
    Tensor coef = gx.defined() ? Tensor::empty({4, C}, mean.dtype(), dev) : Tensor();
    batch_norm_grad_finalize_kernel<D><<<finalize_blocks(C), finalize_block(), 0, s>>>(
        partials.view<A>(C), C, static_cast<double>(N * S), training, mp, static_cast<const A*>(invstd.data_ptr()),
        param<D>(call.in(4)), param<D>(gw), param<D>(gb), coef.defined() ? static_cast<A*>(coef.data_ptr()) : nullptr);
    HEARTH_CUDA_CHECK_LAUNCH();
    if (!gx.defined() || x.numel() == 0) return;
    D* op = static_cast<D*>(gx.data_ptr());
    const A* cp = static_cast<const A*>(coef.data_ptr());
    if (rp) {
      // grad_x from the masked gradient just written: one read less than grad_y and y.
      gp = rp;
      mask = ReluMask<D>{};
      kind = MaskKind::none;
    }
    if (S == 1) {
      const int vec = row_vector<D>(C, {gp, xp, mask.y, op});
      const RowTiles t = plan_row_tiles(N, C, vec, dev.index, 8);
      with_row_vector<D>(vec, [&](auto v) {
        with_mask([&](auto m) {
          batch_norm_grad_apply_rows_kernel<D, decltype(v)::value, decltype(m)::value>
              <<<dim3(t.col_tiles, t.row_blocks), t.block, 0, s>>>(gp, xp, mask, op, cp, N, C);
        });
      });
    } else {
      const RowPlan p =
          plan_rows(N * C, S, sizeof(D), sizeof(A), {gp, xp, mask.y ? mask.y : xp, op}, dev.index, false);
      with_mask([&](auto m) {
        if (p.vec)
          batch_norm_grad_apply_kernel<D, kVecOf<D>, decltype(m)::value>
              <<<p.blocks, p.threads, 0, s>>>(gp, xp, mask, op, cp, N * C, C, S, p.tpr);
        else
          batch_norm_grad_apply_kernel<D, 1, decltype(m)::value>
              <<<p.blocks, p.threads, 0, s>>>(gp, xp, mask, op, cp, N * C, C, S, p.tpr);
      });
    }
    HEARTH_CUDA_CHECK_LAUNCH();
  });
}

// The fused forms: the same kernel, which reads the ReLU from the attributes
// and the residual from input 5.
HEARTH_REGISTER_KERNEL(batch_norm, cuda_kind(), batch_norm_forward, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(batch_norm_relu, cuda_kind(), batch_norm_forward, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(batch_norm_add_relu, cuda_kind(), batch_norm_forward, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(batch_norm_backward, cuda_kind(), batch_norm_backward, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
