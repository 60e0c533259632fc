// The per-channel maths of the CUDA batch norm, shared by its three-kernel
// path (batch_norm.cu) and its single-kernel path
// (batch_norm_single_kernel.cu), so that both compute alike: turning a
// channel's merged sums into statistics, running statistics and the forward's
// affine map, or into the parameter gradients and backward's map; and applying
// those maps to a thread's 16 bytes of adjacent channels of one row.
#pragma once

#include <cstdint>
#include <type_traits>

#include "hearth/backends/cuda/batch_norm_partials.cuh"
#include "hearth/backends/cuda/nn_util.cuh"
#include "hearth/dispatch/op_call.h"

namespace hearth::cuda::batch_norm_detail {

struct BnFinalizeArgs {
  int64_t C, S;
  double count, momentum, eps;
  bool training;
};

// Channel c from its sums s0, s1 (training: the shifted sums, in double):
// batch (or running) statistics, running-statistic update, and the affine map
// y = x * scale + shift, all in double.
template <typename D>
__device__ __forceinline__ void finalize_channel(int64_t c, double s0, double s1, const D* __restrict__ x,
                                                 const BnFinalizeArgs& a, Param<D> rm, Param<D> rv, Param<D> w,
                                                 Param<D> b, acc_t<D>* mean_out, acc_t<D>* invstd_out,
                                                 acc_t<D>* affine) {
  double mean, invstd;
  if (a.training) {
    const double shift = s0 / a.count;
    const double var = fmax(s1 / a.count - shift * shift, 0.0);
    mean = static_cast<double>(to_acc(x[c * a.S])) + shift;
    invstd = 1.0 / sqrt(var + a.eps);
    if (rm.p) rm.set(c, (1.0 - a.momentum) * static_cast<double>(rm.get(c, 0)) + a.momentum * mean);
    if (rv.p)
      rv.set(c, (1.0 - a.momentum) * static_cast<double>(rv.get(c, 0)) + a.momentum * var * a.count / (a.count - 1));
  } else {
    mean = static_cast<double>(rm.get(c, 0));
    invstd = 1.0 / sqrt(static_cast<double>(rv.get(c, 0)) + a.eps);
  }
  mean_out[c] = static_cast<acc_t<D>>(mean);
  invstd_out[c] = static_cast<acc_t<D>>(invstd);
  const double scale = invstd * static_cast<double>(w.get(c, 1));
  affine[c] = static_cast<acc_t<D>>(scale);
  affine[a.C + c] = static_cast<acc_t<D>>(static_cast<double>(b.get(c, 0)) - mean * scale);
}

// Channel c from sg = sum(g) and sgx = sum(g (x - mean)): grad_weight,
// grad_bias and the map grad_x = k g + b (x - mean) + d, stored as
// coef[0..3][C] = k, b, mean, d (when coef is given).
template <typename D>
__device__ __forceinline__ void grad_finalize_channel(int64_t c, double sg, double sgx, int64_t C, double count,
                                                      bool training, const acc_t<D>* __restrict__ mean,
                                                      const acc_t<D>* __restrict__ invstd, Param<D> w, Param<D> gw,
                                                      Param<D> gb, acc_t<D>* coef) {
  const double is = static_cast<double>(invstd[c]);
  const double sum_gxhat = sgx * is;
  if (gw.p) gw.set(c, sum_gxhat);
  if (gb.p) gb.set(c, sg);
  if (!coef) return;
  const double k = is * static_cast<double>(w.get(c, 1));
  const double mg = training ? sg / count : 0.0, mgx = training ? sum_gxhat / count : 0.0;
  coef[c] = static_cast<acc_t<D>>(k);
  coef[C + c] = static_cast<acc_t<D>>(-k * is * mgx);
  coef[2 * C + c] = mean[c];
  coef[3 * C + c] = static_cast<acc_t<D>>(-k * mg);
}

// The output in D's precision; with the fused ReLU, negative (and NaN) values
// become 0 after rounding, as relu(batch_norm(x)) would.
template <typename D>
__device__ __forceinline__ acc_t<D> bn_out(acc_t<D> v, bool relu) {
  if (!relu) return v;
  const acc_t<D> rounded = to_acc(from_acc<D>(v));
  return rounded > acc_t<D>(0) ? rounded : acc_t<D>(0);
}

// The batch norm's value v plus a residual, v rounded to D first as
// add(batch_norm(x), residual) sees it (the add's own rounding is bn_out's or
// the store's).
template <typename D>
__device__ __forceinline__ acc_t<D> plus_residual(acc_t<D> v, acc_t<D> residual) {
  return to_acc(from_acc<D>(v)) + residual;
}

// The forward's map of VEC adjacent channels c0.. (affine [2][C]), in
// registers. The maps are read with plain loads (no __restrict__): the
// single-kernel path reads them in the kernel that wrote them.
template <typename D, int VEC>
struct AffinePack {
  using A = acc_t<D>;
  using P = Pack<D, VEC>;
  A scale[VEC], shift[VEC];
  __device__ __forceinline__ AffinePack(const A* affine, int64_t C, int64_t c0) {
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      scale[e] = affine[c0 + e];
      shift[e] = affine[C + c0 + e];
    }
  }
  // y of one row's VEC channels: x * scale + shift (plus the residual rin
  // with kResidual), then the fused ReLU when asked.
  template <bool kResidual>
  __device__ __forceinline__ P apply(const P& in, const P& rin, bool relu) const {
    P out;
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const A bn = bn_value(to_acc(in.v[e]), scale[e], shift[e]);
      out.v[e] = from_acc<D>(bn_out<D>(kResidual ? plus_residual<D>(bn, to_acc(rin.v[e])) : bn, relu));
    }
    return out;
  }
};

// Backward's map of VEC adjacent channels c0.. (coef [4][C] and, for a mask
// recomputed from x, the forward's affine map), in registers.
template <typename D, int VEC, MaskKind M>
struct GradPack {
  using A = acc_t<D>;
  using P = Pack<D, VEC>;
  A k[VEC], b[VEC], m[VEC], d[VEC], mscale[VEC], mshift[VEC];
  __device__ __forceinline__ GradPack(const A* coef, ReluMask<D> mask, int64_t C, int64_t c0) {
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      k[e] = coef[c0 + e];
      b[e] = coef[C + c0 + e];
      m[e] = coef[2 * C + c0 + e];
      d[e] = coef[3 * C + c0 + e];
      mscale[e] = M == MaskKind::from_x ? mask.affine[c0 + e] : A(0);
      mshift[e] = M == MaskKind::from_x ? mask.affine[C + c0 + e] : A(0);
    }
  }
  // grad_x of one row's VEC channels from grad_y gv (masked by the ReLU
  // first), x and, for a saved mask, the output mv.
  __device__ __forceinline__ P apply(const P& gv, const P& xv, const P& mv) const {
    P out;
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      const A gm = relu_grad<D, M>(to_acc(gv.v[e]), to_acc(mv.v[e]), to_acc(xv.v[e]), mscale[e], mshift[e]);
      out.v[e] = from_acc<D>(bn_grad_value(k[e], gm, b[e], to_acc(xv.v[e]) - m[e], d[e]));
    }
    return out;
  }
};

// Backward's ReLU mask for a batch_norm_backward call (relu: the forward's
// fused ReLU; residual_grad: output 3, the residual's gradient, is written):
// recomputed from x and the forward's map (input 6) where that was saved, or,
// with a residual (the output depends on it too), read off the saved output
// (input 5).
template <typename D>
MaskKind backward_relu_mask(const OpCall& call, bool relu, bool residual_grad, ReluMask<D>& mask) {
  mask = ReluMask<D>{};
  if (relu && call.in(6).defined() && !residual_grad) {
    mask.affine = static_cast<const acc_t<D>*>(call.in(6).data_ptr());
    return MaskKind::from_x;
  }
  if (relu) {
    mask.y = static_cast<const D*>(call.in(5).data_ptr());
    return MaskKind::saved;
  }
  return MaskKind::none;
}

// Calls launch(std::integral_constant<MaskKind, kind>) for a mask kind.
template <typename F>
void with_mask_kind(MaskKind kind, F&& launch) {
  if (kind == MaskKind::from_x)
    launch(std::integral_constant<MaskKind, MaskKind::from_x>{});
  else if (kind == MaskKind::saved)
    launch(std::integral_constant<MaskKind, MaskKind::saved>{});
  else
    launch(std::integral_constant<MaskKind, MaskKind::none>{});
}

}  // namespace hearth::cuda::batch_norm_detail
