// cross_entropy (log_softmax fused with nll, label smoothing, class weights) and
// nll_loss on CUDA over dense [M, C] rows (formulas in hearth/dispatch/schemas/loss.h).
// cross_entropy reads each row once when it fits in registers: a group of
// threads finds its max, then sum(exp(x - max)) and, with label smoothing,
// sum(w (x - max)), whose terms share one sign, so the smoothing term does not
// cancel. The backward recomputes softmax from the saved lse in one pass.
//
// A target outside [0, C) other than ignore_index cannot raise from the GPU
// without synchronising the host, so it is not checked there: its row's loss and
// target weight are written as NaN (any reduction of the loss is then NaN), and
// its gradient row is zero, as on the CPU.
#include "hearth/backends/cuda/nn_util.cuh"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/loss.h"

namespace hearth::cuda {
namespace {

using namespace nn;

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

// sum(weight) in double, in a fixed order: one block.
template <typename D>
__global__ void weight_sum_kernel(Param<D> w, int64_t C, double* out) {
  __shared__ double smem[32];
  double v[1] = {0};
  for (int64_t c = threadIdx.x; c < C; c += blockDim.x) v[0] += static_cast<double>(w.get(c, 1));
  block_reduce<1>(v, SumOp{}, smem);
  if (threadIdx.x == 0) *out = v[0];
}

// sum(weight) on the device when label smoothing needs it with a weight; else
// undefined (the kernels then use C).
template <typename D>
Tensor weight_sum(const Tensor& weight, double ls, cudaStream_t s) {
  if (!weight.defined() || ls <= 0) return Tensor();
  Tensor out = Tensor::empty({1}, DType::float64, weight.device());
  weight_sum_kernel<D><<<1, 256, 0, s>>>(param<D>(weight), weight.numel(), static_cast<double*>(out.data_ptr()));
  HEARTH_CUDA_CHECK_LAUNCH();
  return out;
}

struct CeArgs {
  int64_t M, C, ignore_index;
  double ls;
  const double* w_sum;  // null: sum of weights is C
};

template <typename D, int VEC, bool kCached>
__global__ void __launch_bounds__(kMaxRowThreads)
    cross_entropy_kernel(const D* __restrict__ x, Index target, Param<D> w, CeArgs a, acc_t<D>* loss, acc_t<D>* lse_out,
                         acc_t<D>* target_weight, int tpr) {
  using A = acc_t<D>;
  __shared__ A smem[64];
  const GroupPos gp = group_pos(tpr);
  const bool smooth = a.ls > 0;
  const A ls = static_cast<A>(a.ls);
  for (const int64_t base : block_row_steps(a.M, tpr)) {
    const int64_t row = base + gp.group;
    const bool active = row < a.M;
    const int64_t off = (active ? row : 0) * a.C;
    const D* src[1] = {x + off};
    Rows<D, VEC, kCached, 1> r(src, a.C, gp.t, tpr, active);
    A mx = -dev_inf<A>();
    r.each([&](int64_t, A(&v)[1]) { mx = MaxOp{}(mx, v[0]); });
    mx = group_reduce1(mx, MaxOp{}, tpr, smem);
    const A shift = dev_isinf(mx) ? A(0) : mx;
    A sums[2] = {0, 0};  // of exp(x - shift) and w (x - shift)
    r.each([&](int64_t col, A(&v)[1]) {
      sums[0] += dev_exp(v[0] - shift);
      if (smooth) sums[1] += w.get(col, 1) * (v[0] - shift);
    });
    group_reduce<2>(sums, SumOp{}, tpr, smem);
    if (!active || gp.t != 0) continue;
    const A lse = dev_log(sums[0]) + shift;
    lse_out[row] = lse;
    const int64_t t = target[row];
    if (t == a.ignore_index) {
      loss[row] = target_weight[row] = A(0);
    } else if (t < 0 || t >= a.C) {
      loss[row] = target_weight[row] = dev_nan<A>();
    } else {
      const A wt = w.get(t, 1);
      A l = (A(1) - ls) * wt * (lse - to_acc(x[off + t]));
      if (smooth) {
        const A w_sum = a.w_sum ? static_cast<A>(*a.w_sum) : static_cast<A>(a.C);
        l += ls / static_cast<A>(a.C) * ((lse - shift) * w_sum - sums[1]);
      }
      loss[row] = l;
      target_weight[row] = wt;
    }
  }
}

template <typename D, int VEC>
__global__ void __launch_bounds__(kMaxRowThreads)
    cross_entropy_backward_kernel(const D* __restrict__ x, Index target, const acc_t<D>* __restrict__ lse,
                                  const acc_t<D>* __restrict__ grad_loss, Param<D> w, CeArgs a, D* __restrict__ gx,
                                  int tpr) {
  using A = acc_t<D>;
  const GroupPos gp = group_pos(tpr);
  const A ls = static_cast<A>(a.ls), per_class = static_cast<A>(a.ls / static_cast<double>(a.C));
  const A w_sum = a.w_sum ? static_cast<A>(*a.w_sum) : static_cast<A>(a.C);
  for (int64_t row : group_rows(a.M, tpr, gp)) {
    const int64_t off = row * a.C, t = target[row];
    const D* src[1] = {x + off};
    Rows<D, VEC, false, 1> r(src, a.C, gp.t, tpr, true);
    if (t == a.ignore_index || t < 0 || t >= a.C) {
      r.store(gx + off, [](int64_t, A(&)[1]) { return A(0); });
      continue;
    }
    const A g = grad_loss[row], l = lse[row], wt = w.get(t, 1);
    const A coef = (A(1) - ls) * wt + per_class * w_sum, hit = (A(1) - ls) * wt;
    r.store(gx + off, [&](int64_t col, A(&v)[1]) {
      A d = coef * dev_exp(v[0] - l) - per_class * w.get(col, 1);
      if (col == t) d -= hit;
      return g * d;
    });
  }
}

template <typename D>
__global__ void nll_loss_kernel(const D* __restrict__ x, Index target, Param<D> w, int64_t M, int64_t C,
                                int64_t ignore_index, acc_t<D>* loss, acc_t<D>* target_weight) {
  using A = acc_t<D>;
  for (int64_t r : thread_rows(M)) {
    const int64_t t = target[r];
    if (t == ignore_index) {
      loss[r] = target_weight[r] = A(0);
    } else if (t < 0 || t >= C) {
      loss[r] = target_weight[r] = dev_nan<A>();
    } else {
      const A wt = w.get(t, 1);
      loss[r] = -wt * to_acc(x[r * C + t]);
      target_weight[r] = wt;
    }
  }
}

// Writes the one nonzero of each row; the rest was zeroed before.
template <typename D>
__global__ void nll_loss_backward_kernel(const acc_t<D>* __restrict__ grad_loss, Index target, Param<D> w, int64_t M,
                                         int64_t C, int64_t ignore_index, D* __restrict__ gx) {
  for (int64_t r : thread_rows(M)) {
    const int64_t t = target[r];
    if (t == ignore_index || t < 0 || t >= C) continue;
    gx[r * C + t] = from_acc<D>(-grad_loss[r] * w.get(t, 1));
  }
}

void cross_entropy_forward(OpCall& call) {
  const Tensor &x = call.in(0), &target = call.in(1), &weight = call.in(2);
  const Tensor &loss = call.out(0), &lse = call.out(1), &tw = call.out(2);
  const CrossEntropyAttrs& at = call.attrs<CrossEntropyAttrs>();
  const int device = x.device().index;
  activate(device);
  const cudaStream_t s = stream(device);
  const int64_t M = x.shape()[0], C = x.shape()[1];
  if (M == 0) return;
  HEARTH_CUDA_DISPATCH_FLOATING(x.dtype(), "cross_entropy", [&] {
    using D = scalar_t;
    using A = acc_t<D>;
    const D* xp = static_cast<const D*>(x.data_ptr());
    const Tensor w_sum = weight_sum<D>(weight, at.label_smoothing, s);
    const CeArgs args{M, C, at.ignore_index, at.label_smoothing,
                      w_sum.defined() ? static_cast<const double*>(w_sum.data_ptr()) : nullptr};
    const RowPlan p = plan_rows(M, C, sizeof(D), sizeof(A), {xp}, device, true);
    with_row_layout<D>(p, [&](auto vec, auto cached) {
      cross_entropy_kernel<D, decltype(vec)::value, decltype(cached)::value><<<p.blocks, p.threads, 0, s>>>(
          xp, index_of(target), param<D>(weight), args, static_cast<A*>(loss.data_ptr()),
          static_cast<A*>(lse.data_ptr()), static_cast<A*>(tw.data_ptr()), p.tpr);
    });
    HEARTH_CUDA_CHECK_LAUNCH();
  });
}

void cross_entropy_backward(OpCall& call) {
  const Tensor &x = call.in(0), &target = call.in(1), &lse = call.in(2), &gl = call.in(3), &weight = call.in(4);
  const Tensor& gx = call.out(0);
  const CrossEntropyAttrs& at = call.attrs<CrossEntropyAttrs>();
  const int device = x.device().index;
  activate(device);
  const cudaStream_t s = stream(device);
  const int64_t M = x.shape()[0], C = x.shape()[1];
  if (M == 0) return;
  HEARTH_CUDA_DISPATCH_FLOATING(x.dtype(), "cross_entropy_backward", [&] {
    using D = scalar_t;
    using A = acc_t<D>;
    const D* xp = static_cast<const D*>(x.data_ptr());
    D* op = static_cast<D*>(gx.data_ptr());
    const Tensor w_sum = weight_sum<D>(weight, at.label_smoothing, s);
    const CeArgs args{M, C, at.ignore_index, at.label_smoothing,
                      w_sum.defined() ? static_cast<const double*>(w_sum.data_ptr()) : nullptr};
    const RowPlan p = plan_rows(M, C, sizeof(D), sizeof(A), {xp, op}, device, false);
    const A* lp = static_cast<const A*>(lse.data_ptr());
    const A* gp = static_cast<const A*>(gl.data_ptr());
    if (p.vec)
      cross_entropy_backward_kernel<D, kVecOf<D>>
          <<<p.blocks, p.threads, 0, s>>>(xp, index_of(target), lp, gp, param<D>(weight), args, op, p.tpr);
    else
      cross_entropy_backward_kernel<D, 1>
          <<<p.blocks, p.threads, 0, s>>>(xp, index_of(target), lp, gp, param<D>(weight), args, op, p.tpr);
    HEARTH_CUDA_CHECK_LAUNCH();
  });
}

void nll_loss_forward(OpCall& call) {
  const Tensor &x = call.in(0), &target = call.in(1), &weight = call.in(2);
  const int64_t ignore_index = call.attrs<NllLossAttrs>().ignore_index;
  const int device = x.device().index;
  activate(device);
  const int64_t M = x.shape()[0], C = x.shape()[1];
  if (M == 0) return;
  HEARTH_CUDA_DISPATCH_FLOATING(x.dtype(), "nll_loss", [&] {
    using D = scalar_t;
    using A = acc_t<D>;
    nll_loss_kernel<D><<<row_grid(M, 256, device), 256, 0, stream(device)>>>(
        static_cast<const D*>(x.data_ptr()), index_of(target), param<D>(weight), M, C, ignore_index,
        static_cast<A*>(call.out(0).data_ptr()), static_cast<A*>(call.out(1).data_ptr()));
    HEARTH_CUDA_CHECK_LAUNCH();
  });
}

void nll_loss_backward(OpCall& call) {
  const Tensor &gl = call.in(0), &target = call.in(1), &weight = call.in(2), &gx = call.out(0);
  const int64_t ignore_index = call.attrs<NllLossAttrs>().ignore_index;
  const int device = gx.device().index;
  activate(device);
  const cudaStream_t s = stream(device);
  const int64_t M = gx.shape()[0], C = gx.shape()[1];
  if (gx.numel() == 0) return;
  HEARTH_CUDA_CHECK(cudaMemsetAsync(gx.data_ptr(), 0, gx.nbytes(), s));  // zero bits are 0.0 in every float dtype
  HEARTH_CUDA_DISPATCH_FLOATING(gx.dtype(), "nll_loss_backward", [&] {
    using D = scalar_t;
    using A = acc_t<D>;
    nll_loss_backward_kernel<D><<<row_grid(M, 256, device), 256, 0, s>>>(static_cast<const A*>(gl.data_ptr()),
                                                                         index_of(target), param<D>(weight), M, C,
                                                                         ignore_index, static_cast<D*>(gx.data_ptr()));
    HEARTH_CUDA_CHECK_LAUNCH();
  });
}

HEARTH_REGISTER_KERNEL(cross_entropy, cuda_kind(), cross_entropy_forward, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(cross_entropy_backward, cuda_kind(), cross_entropy_backward, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(nll_loss, cuda_kind(), nll_loss_forward, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(nll_loss_backward, cuda_kind(), nll_loss_backward, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
