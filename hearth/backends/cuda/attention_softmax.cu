// attention_softmax and its backward on CUDA (contracts in
// hearth/dispatch/schemas/attention_softmax.h). A group of threads owns a row of the scores,
// as in the softmax kernels: the row is read once (kept in registers when it
// fits: BERT's 128 columns take one warp, four or eight per thread), scaled,
// masked, reduced with warp shuffles, and y, the dropped probabilities and the
// keep mask are written once. The keep decision of element i is dropout's:
// lane i%4 of philox(offset + i/4) (offset shifted inside replayed step
// graphs), compared on integers, (bits >> 8) >= ceil(p * 2^24), so the mask
// equals the CPU's bit for bit. The backward reads the output gradient, y and
// the keep mask once and writes the scores' gradient once.
#include <cmath>

#include "hearth/backends/cuda/nn_util.cuh"
#include "hearth/backends/cuda/philox.cuh"
#include "hearth/backends/cuda/step_graph.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/attention_softmax.h"

namespace hearth::cuda {
namespace {

using namespace nn;

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

// The mask of row r starts at element offset(r) (see AttentionSoftmaxAttrs),
// of dtype D, or acc_t<D> beside half scores (`wide`).
template <typename D>
struct MaskRows {
  const void* p = nullptr;
  bool wide = false;
  int64_t n1 = 1, n2 = 1, s0 = 0, s1 = 0, s2 = 0, col = 1;
  __device__ int64_t offset(int64_t r) const {
    const int64_t i2 = r % n2, rest = r / n2;
    return (rest / n1) * s0 + (rest % n1) * s1 + i2 * s2;
  }
  __device__ acc_t<D> at(int64_t i) const {
    return wide ? static_cast<const acc_t<D>*>(p)[i] : to_acc(static_cast<const D*>(p)[i]);
  }
};

struct DropArgs {
  uint64_t seed = 0, offset = 0;
  const uint64_t* shift = nullptr;
  uint32_t threshold = 0;  // ceil(p * 2^24); 0 with no dropout
  double scale = 1.0;      // 1 / (1 - p)
};

// Values of a row the forward keeps per thread: half the usual, since the
// dropout (Philox rounds, three outputs) needs registers of its own.
template <typename D>
inline constexpr int kForwardCacheElems = sizeof(acc_t<D>) == 8 ? 8 : 16;

template <typename D, int VEC, bool kCached>
__global__ void __launch_bounds__(kMaxRowThreads)
    attention_softmax_kernel(const D* __restrict__ x, MaskRows<D> mask, D* __restrict__ probs, D* __restrict__ y,
                             bool* __restrict__ keep, int64_t M, int64_t K, int tpr, acc_t<D> scale, DropArgs drop) {
  using A = acc_t<D>;
  __shared__ A smem[32];
  const bool dropping = drop.threshold > 0;
  const uint64_t offset = dropping ? philox_offset(drop.offset, drop.shift) : 0;
  const A drop_scale = static_cast<A>(drop.scale);
  const GroupPos gp = group_pos(tpr);
  for (const int64_t base : block_row_steps(M, tpr)) {
    const int64_t row = base + gp.group;
    const bool active = row < M;
    const int64_t off = (active ? row : 0) * K;
    const int64_t mo = mask.p ? mask.offset(active ? row : 0) : 0;
    const D* src[1] = {x + off};
    Rows<D, VEC, kCached, 1, kForwardCacheElems<D>> r(src, K, gp.t, tpr, active);
    auto logit = [&](int64_t col, A v) { return mask.p ? v * scale + mask.at(mo + col * mask.col) : v * scale; };
    // Cached rows turn into logits, then exponentials, in place; uncached ones
    // are recomputed from the scores on each pass.
    A mx = -dev_inf<A>();
    r.each([&](int64_t col, A(&v)[1]) {
      const A l = logit(col, v[0]);
      if constexpr (kCached) v[0] = l;
      mx = MaxOp{}(mx, l);
    });
    mx = group_reduce1(mx, MaxOp{}, tpr, smem);
    const A shift = dev_isinf(mx) ? A(0) : mx;
    A sum = 0;
    r.each([&](int64_t col, A(&v)[1]) {
      const A e = dev_exp((kCached ? v[0] : logit(col, v[0])) - shift);
      if constexpr (kCached) v[0] = e;
      sum += e;
    });
    sum = group_reduce1(sum, SumOp{}, tpr, smem);
    const A inv = A(1) / sum;
    // Writes chunk c (columns c * VEC ...) from its exponentials.
    auto emit = [&](int64_t c, const A(&e)[VEC]) {
      Pack<D, VEC> yv;
#pragma unroll
      for (int k = 0; k < VEC; ++k) yv.v[k] = from_acc<D>(e[k] * inv);
      if (!dropping) {
        reinterpret_cast<Pack<D, VEC>*>(probs + off)[c] = yv;
        return;
      }
      bool kept[VEC];
      dropout_keep<VEC>(static_cast<uint64_t>(off + c * VEC), kept, offset, drop.seed, drop.threshold);
      Pack<D, VEC> pv;
      Pack<bool, VEC> kv;
#pragma unroll
      for (int k = 0; k < VEC; ++k) {
        pv.v[k] = from_acc<D>(kept[k] ? to_acc(yv.v[k]) * drop_scale : A(0));
        kv.v[k] = kept[k];
      }
      reinterpret_cast<Pack<D, VEC>*>(y + off)[c] = yv;
      reinterpret_cast<Pack<D, VEC>*>(probs + off)[c] = pv;
      reinterpret_cast<Pack<bool, VEC>*>(keep + off)[c] = kv;
    };
    if (!active) continue;
    if constexpr (kCached) {
#pragma unroll
      for (int q = 0; q < decltype(r)::kSlots; ++q) {
        const int64_t c = gp.t + static_cast<int64_t>(q) * tpr;
        if (c * VEC < K) emit(c, r.cache[0][q]);
      }
    } else {
      for (int64_t c = gp.t; c * VEC < K; c += tpr) {
        A e[VEC];
        r.load(0, c, e);
#pragma unroll
        for (int k = 0; k < VEC; ++k) e[k] = dev_exp(logit(c * VEC + k, e[k]) - shift);
        emit(c, e);
      }
    }
  }
}

// grad_scores = scale * (y * (g - sum(g * y))), g the output gradient with
// dropout undone (keep ? grad / (1 - p) : 0).
template <typename D, int VEC, bool kCached>
__global__ void __launch_bounds__(kMaxRowThreads)
    attention_softmax_backward_kernel(const D* __restrict__ g, const D* __restrict__ y, const bool* __restrict__ keep,
                                      D* __restrict__ gx, int64_t M, int64_t K, int tpr, acc_t<D> scale,
                                      acc_t<D> drop_scale) {
  using A = acc_t<D>;
  __shared__ A smem[32];
  const GroupPos gp = group_pos(tpr);
  for (const int64_t base : block_row_steps(M, tpr)) {
    const int64_t row = base + gp.group;
    const bool active = row < M;
    const int64_t off = (active ? row : 0) * K;
    const D* src[2] = {g + off, y + off};
    const bool* kr = keep ? keep + off : nullptr;
    Rows<D, VEC, kCached, 2> r(src, K, gp.t, tpr, active);
    auto undrop = [&](int64_t col, A v) { return !kr ? v : kr[col] ? v * drop_scale : A(0); };
    A dot = 0;
    r.each([&](int64_t col, A(&v)[2]) {
      const A gv = undrop(col, v[0]);
      if constexpr (kCached) v[0] = gv;
      dot += gv * v[1];
    });
    dot = group_reduce1(dot, SumOp{}, tpr, smem);
    r.store(gx + off, [&](int64_t col, A(&v)[2]) {
      const A gv = kCached ? v[0] : undrop(col, v[0]);
      return scale * (v[1] * (gv - dot));
    });
  }
}

void attention_softmax_forward(OpCall& call) {
  const Tensor &x = call.in(0), &mask = call.in(1);
  const Tensor &probs = call.out(0), &y = call.out(1), &keep = call.out(2);
  const AttentionSoftmaxAttrs& a = call.attrs<AttentionSoftmaxAttrs>();
  const int device = x.device().index;
  activate(device);
  const cudaStream_t s = stream(device);
  const int64_t M = x.shape()[0], K = x.shape()[1];
  if (x.numel() == 0) return;
  const bool dropping = a.p > 0.0;
  DropArgs drop;
  if (dropping) {
    drop.seed = a.seed;
    drop.offset = a.offset;
    drop.shift = philox_offset_shift(device);
    drop.threshold = static_cast<uint32_t>(std::ceil(a.p * 16777216.0));
    drop.scale = 1.0 / (1.0 - a.p);
  }
  HEARTH_CUDA_DISPATCH_FLOATING(x.dtype(), "attention_softmax", [&] {
    using D = scalar_t;
    MaskRows<D> m;
    if (mask.defined()) {
      m.p = mask.data_ptr();
      m.wide = mask.dtype() != x.dtype();
      m.n1 = a.row_sizes[1];
      m.n2 = a.row_sizes[2];
      m.s0 = a.row_strides[0];
      m.s1 = a.row_strides[1];
      m.s2 = a.row_strides[2];
      m.col = a.mask_col_stride;
    }
    const D* xp = static_cast<const D*>(x.data_ptr());
    D* pp = static_cast<D*>(probs.data_ptr());
    D* yp = dropping ? static_cast<D*>(y.data_ptr()) : nullptr;
    bool* kp = dropping ? static_cast<bool*>(keep.data_ptr()) : nullptr;
    const RowPlan p =
        plan_rows(M, K, sizeof(D), sizeof(acc_t<D>), {xp, pp, yp, kp}, device, true, kForwardCacheElems<D>);
    with_row_layout<D>(p, [&](auto vec, auto cached) {
      attention_softmax_kernel<D, decltype(vec)::value, decltype(cached)::value>
          <<<p.blocks, p.threads, 0, s>>>(xp, m, pp, yp, kp, M, K, p.tpr, static_cast<acc_t<D>>(a.scale), drop);
    });
    HEARTH_CUDA_CHECK_LAUNCH();
  });
}

void attention_softmax_backward(OpCall& call) {
  const Tensor &g = call.in(0), &y = call.in(1), &keep = call.in(2), &gx = call.out(0);
  const AttentionSoftmaxAttrs& a = call.attrs<AttentionSoftmaxAttrs>();
  const int device = y.device().index;
  activate(device);
  const cudaStream_t s = stream(device);
  const int64_t M = y.shape()[0], K = y.shape()[1];
  if (y.numel() == 0) return;
  HEARTH_CUDA_DISPATCH_FLOATING(y.dtype(), "attention_softmax_backward", [&] {
    using D = scalar_t;
    const D* gp = static_cast<const D*>(g.data_ptr());
    const D* yp = static_cast<const D*>(y.data_ptr());
    const bool* kp = keep.defined() ? static_cast<const bool*>(keep.data_ptr()) : nullptr;
    D* op = static_cast<D*>(gx.data_ptr());
    const RowPlan p = plan_rows(M, K, sizeof(D), sizeof(acc_t<D>), {gp, yp, op}, device, true);
    with_row_layout<D>(p, [&](auto vec, auto cached) {
      attention_softmax_backward_kernel<D, decltype(vec)::value, decltype(cached)::value>
          <<<p.blocks, p.threads, 0, s>>>(gp, yp, kp, op, M, K, p.tpr, static_cast<acc_t<D>>(a.scale),
                                          static_cast<acc_t<D>>(1.0 / (1.0 - a.p)));
    });
    HEARTH_CUDA_CHECK_LAUNCH();
  });
}

HEARTH_REGISTER_KERNEL(attention_softmax, cuda_kind(), attention_softmax_forward, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(attention_softmax_backward, cuda_kind(), attention_softmax_backward, DTypeSet::floating());

}  // namespace
}  // namespace hearth::cuda
