// Dropout, residual add and layer norm on CUDA (contract in
// hearth/dispatch/schemas/dropout_add_layer_norm.h): one kernel each way, a
// group of threads per row as in layer_norm.cu.
//
// Forward: x and the residual are read once; each element is dropped as
// dropout drops it (dropout_keep, philox.cuh: the same mask as the CPU's and
// as dropout's for the same seed and offset, the offset shifted inside
// replayed step graphs), rounded to x's dtype, added to the residual and
// rounded to the sum's, as the three ops round; the sum is kept in registers
// for the exact two-pass statistics and the normalised output, and written
// out when the backward will read it.
//
// Backward: the output gradient and the sum are read once (kept in
// registers); the sum's gradient is written as the residual's, and x's is
// the same with the dropout mask drawn again from the forward's seed and
// offset (no mask is stored: the counters cost arithmetic, not bytes). The
// same kernel sums the weight and bias gradients over its rows: a thread
// keeps the partial sums of the columns it owns across all the rows its group
// takes, the groups of a block add theirs in a fixed order, and each block
// writes one row of partials, which a second small kernel sums in order (as
// layer_norm.cu's final pass does): no atomics, the same result every run.
// Rows too long for registers (beyond 16 values a thread at 512 threads) keep
// the separate column-sum pass of layer_norm.cu instead.
#include <algorithm>
#include <cmath>

#include "hearth/backends/cuda/layer_norm_params.cuh"
#include "hearth/backends/cuda/nn_util.cuh"
#include "hearth/backends/cuda/philox.cuh"
#include "hearth/backends/cuda/step_graph.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/dropout_add_layer_norm.h"

namespace hearth::cuda {
namespace {

using namespace nn;

DeviceKind cuda_kind() { return register_device_kind("cuda"); }

constexpr DTypeSet kDtypes = {DType::float32, DType::bfloat16, DType::float16};

struct DropArgs {
  uint64_t seed = 0, offset = 0;
  const uint64_t* shift = nullptr;
  uint32_t threshold = 0;  // ceil(p * 2^24)
  double scale = 1.0;      // 1 / (1 - p)
};

DropArgs drop_args(const DropoutAddLayerNormAttrs& a, int device) {
  DropArgs d;
  if (a.p > 0.0) {
    d.seed = a.seed;
    d.offset = a.offset;
    d.shift = philox_offset_shift(device);
    d.threshold = static_cast<uint32_t>(std::ceil(a.p * 16777216.0));
    d.scale = 1.0 / (1.0 - a.p);
  }
  return d;
}

// A product rounded on its own, never fused with an add that follows: dropout
// rounds its output before the residual is added to it.
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }

// Chunk c (elements c * VEC ...) of a row, widened to A, and back.
template <typename D, int VEC, typename A>
__device__ __forceinline__ void load_chunk(const D* row, int64_t c, A (&out)[VEC]) {
  if constexpr (VEC == 1) {
    out[0] = to_acc(row[c]);
  } else {
    const Pack<D, VEC> p = reinterpret_cast<const Pack<D, VEC>*>(row)[c];
#pragma unroll
    for (int e = 0; e < VEC; ++e) out[e] = to_acc(p.v[e]);
  }
}
template <typename D, int VEC, typename A>
__device__ __forceinline__ void store_chunk(D* row, int64_t c, const A (&in)[VEC]) {
  if constexpr (VEC == 1) {
    row[c] = from_acc<D>(in[0]);
  } else {
    Pack<D, VEC> p;
#pragma unroll
    for (int e = 0; e < VEC; ++e) p.v[e] = from_acc<D>(in[e]);
    reinterpret_cast<Pack<D, VEC>*>(row)[c] = p;
  }
}

// Values a thread keeps per cached row: the forward half the usual (the
// Philox rounds need registers of their own); the backward keeps two rows and
// as many column partial sums.
constexpr int kForwardCacheElems = 16;
constexpr int kBackwardCacheElems = 16;

// ---- forward: x [M, K] (XD), residual [M, K] (TD) ----

template <typename XD, typename TD, int VEC, bool kCached, bool kDrop>
__global__ void __launch_bounds__(kMaxRowThreads)
    forward_kernel(const XD* __restrict__ x, const TD* __restrict__ res, Param<TD> w, Param<TD> b, TD* __restrict__ y,
                   TD* __restrict__ sum, acc_t<TD>* __restrict__ mean_out, acc_t<TD>* __restrict__ rstd_out, int64_t M,
                   int64_t K, acc_t<TD> eps, int tpr, DropArgs drop) {
  using A = acc_t<TD>;
  static_assert(std::is_same_v<A, acc_t<XD>>, "x and the sum compute in one type");
  constexpr int kSlots = kCached ? cache_chunks(sizeof(A), VEC, kForwardCacheElems) : 1;
  __shared__ A smem[32];
  const GroupPos gp = group_pos(tpr);
  const uint64_t offset = kDrop ? philox_offset(drop.offset, drop.shift) : 0;
  const A scale = static_cast<A>(drop.scale);
  A cache[kSlots][VEC];
  for (const int64_t base : block_row_steps(M, tpr)) {
    const int64_t row = base + gp.group;
    const bool active = row < M;
    const int64_t off = (active ? row : 0) * K;
    const XD* xr = x + off;
    const TD* rr = res + off;
    // The sum of chunk c, rounded as dropout and add round it.
    auto sum_chunk = [&](int64_t c, A(&s)[VEC]) {
      A xv[VEC], rv[VEC];
      load_chunk<XD, VEC>(xr, c, xv);
      load_chunk<TD, VEC>(rr, c, rv);
      if constexpr (kDrop) {
        bool keep[VEC];
        dropout_keep<VEC>(static_cast<uint64_t>(off + c * VEC), keep, offset, drop.seed, drop.threshold);
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
          const A d = keep[e] ? to_acc(from_acc<XD>(mul_rn(xv[e], scale))) : A(0);
          s[e] = to_acc(from_acc<TD>(d + rv[e]));
        }
      } else {
#pragma unroll
        for (int e = 0; e < VEC; ++e) s[e] = to_acc(from_acc<TD>(xv[e] + rv[e]));
      }
    };
    // Calls f(c, values of chunk c) for this thread's chunks: the cached sums,
    // or sums made again from x and the residual.
    auto each_chunk = [&](auto&& f) {
      if (!active) return;
      if constexpr (kCached) {
#pragma unroll
        for (int q = 0; q < kSlots; ++q) {
          const int64_t c = gp.t + static_cast<int64_t>(q) * tpr;
          if (c * VEC < K) f(c, cache[q]);
        }
      } else {
        for (int64_t c = gp.t; c * VEC < K; c += tpr) {
          A s[VEC];
          sum_chunk(c, s);
          f(c, s);
        }
      }
    };
    A total = 0;
    if (active) {
      auto first = [&](int64_t c, A(&s)[VEC]) {
        if (sum) store_chunk<TD, VEC>(sum + off, c, s);
#pragma unroll
        for (int e = 0; e < VEC; ++e) total += s[e];
      };
      if constexpr (kCached) {
#pragma unroll
        for (int q = 0; q < kSlots; ++q) {
          const int64_t c = gp.t + static_cast<int64_t>(q) * tpr;
          if (c * VEC < K) {
            sum_chunk(c, cache[q]);
            first(c, cache[q]);
          }
        }
      } else {
        for (int64_t c = gp.t; c * VEC < K; c += tpr) {
          A s[VEC];
          sum_chunk(c, s);
          first(c, s);
        }
      }
    }
    const A mean = group_reduce1(total, SumOp{}, tpr, smem) / static_cast<A>(K);
    A ss = 0;
    each_chunk([&](int64_t, A(&s)[VEC]) {
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        const A d = s[e] - mean;
        ss += d * d;
      }
    });
    const A var = group_reduce1(ss, SumOp{}, tpr, smem) / static_cast<A>(K);
    const A rstd = A(1) / dev_sqrt(var + eps);
    if (active && gp.t == 0) {
      mean_out[row] = mean;
      rstd_out[row] = rstd;
    }
    each_chunk([&](int64_t c, A(&s)[VEC]) {
      A o[VEC];
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        const int64_t col = c * VEC + e;
        o[e] = (s[e] - mean) * rstd * w.get(col, 1) + b.get(col, 0);
      }
      store_chunk<TD, VEC>(y + off, c, o);
    });
  }
}

// ---- backward: grad_y and the sum [M, K] (TD) ----

// kParams: the weight and bias gradients' partial sums, [2][gridDim.x][K],
// from this kernel (cached rows only: a thread's columns then fit its
// registers); dynamic shared memory of K values.
template <typename XD, typename TD, int VEC, bool kCached, bool kDrop, bool kParams>
__global__ void __launch_bounds__(kMaxRowThreads)
    backward_kernel(const TD* __restrict__ g, const TD* __restrict__ s, const acc_t<TD>* __restrict__ mean,
                    const acc_t<TD>* __restrict__ rstd, Param<TD> w, XD* __restrict__ gx, TD* __restrict__ gres,
                    acc_t<TD>* __restrict__ partials, int64_t M, int64_t K, int tpr, DropArgs drop) {
  using A = acc_t<TD>;
  using R = Rows<TD, VEC, kCached, 2, kBackwardCacheElems>;
  static_assert(kCached || !kParams, "the column partials live in registers");
  constexpr int kPSlots = kParams ? R::kSlots : 1;
  __shared__ A smem[64];
  extern __shared__ __align__(16) unsigned char dynamic_smem[];
  A* colsum = reinterpret_cast<A*>(dynamic_smem);
  const GroupPos gp = group_pos(tpr);
  const uint64_t offset = kDrop ? philox_offset(drop.offset, drop.shift) : 0;
  const A scale = static_cast<A>(drop.scale);
  A pw[kPSlots][VEC], pb[kPSlots][VEC];  // this thread's columns: sums of g * xhat and of g
  if constexpr (kParams) {
#pragma unroll
    for (int q = 0; q < kPSlots; ++q)
#pragma unroll
      for (int e = 0; e < VEC; ++e) pw[q][e] = pb[q][e] = A(0);
  }
  for (const int64_t base : block_row_steps(M, tpr)) {
    const int64_t row = base + gp.group;
    const bool active = row < M;
    const int64_t off = (active ? row : 0) * K;
    const A m = active ? mean[row] : A(0), rs = active ? rstd[row] : A(0);
    const TD* src[2] = {g + off, s + off};
    R r(src, K, gp.t, tpr, active);
    A sums[2] = {0, 0};  // of g w and g w xhat
    if constexpr (kCached) {
      if (active) {
#pragma unroll
        for (int q = 0; q < R::kSlots; ++q) {
          const int64_t c = gp.t + static_cast<int64_t>(q) * tpr;
          if (c * VEC >= K) continue;
#pragma unroll
          for (int e = 0; e < VEC; ++e) {
            const A gv = r.cache[0][q][e], xhat = (r.cache[1][q][e] - m) * rs;
            const A gw = gv * w.get(c * VEC + e, 1);
            sums[0] += gw;
            sums[1] += gw * xhat;
            if constexpr (kParams) {
              pw[q][e] += gv * xhat;
              pb[q][e] += gv;
            }
          }
        }
      }
    } else {
      r.each([&](int64_t col, A(&v)[2]) {
        const A gw = v[0] * w.get(col, 1);
        sums[0] += gw;
        sums[1] += gw * ((v[1] - m) * rs);
      });
    }
    group_reduce<2>(sums, SumOp{}, tpr, smem);
    const A mean_gw = sums[0] / static_cast<A>(K), mean_gwx = sums[1] / static_cast<A>(K);
    if (!active) continue;
    // The sum's gradient of chunk c (layer_norm_backward's formula), rounded
    // to TD: the residual's; x's is it rounded to XD, dropped and scaled as
    // dropout_backward does.
    auto emit = [&](int64_t c, const A(&gv)[VEC], const A(&sv)[VEC]) {
      A gs[VEC];
#pragma unroll
      for (int e = 0; e < VEC; ++e)
        gs[e] = to_acc(from_acc<TD>(rs * (gv[e] * w.get(c * VEC + e, 1) - mean_gw - (sv[e] - m) * rs * mean_gwx)));
      if (gres) store_chunk<TD, VEC>(gres + off, c, gs);
      if (!gx) return;
      if constexpr (kDrop) {
        bool keep[VEC];
        dropout_keep<VEC>(static_cast<uint64_t>(off + c * VEC), keep, offset, drop.seed, drop.threshold);
        A o[VEC];
#pragma unroll
        for (int e = 0; e < VEC; ++e) o[e] = keep[e] ? mul_rn(to_acc(from_acc<XD>(gs[e])), scale) : A(0);
        store_chunk<XD, VEC>(gx + off, c, o);
      } else {
        store_chunk<XD, VEC>(gx + off, c, gs);
      }
    };
    if constexpr (kCached) {
#pragma unroll
      for (int q = 0; q < R::kSlots; ++q) {
        const int64_t c = gp.t + static_cast<int64_t>(q) * tpr;
        if (c * VEC < K) emit(c, r.cache[0][q], r.cache[1][q]);
      }
    } else {
      for (int64_t c = gp.t; c * VEC < K; c += tpr) {
        A gv[VEC], sv[VEC];
        r.load(0, c, gv);
        r.load(1, c, sv);
        emit(c, gv, sv);
      }
    }
  }
  if constexpr (kParams) {
    // The block's groups own the same columns: they add their partials into
    // shared memory one group after another, then the block writes its row.
    const int groups = blockDim.x / tpr;
#pragma unroll
    for (int which = 0; which < 2; ++which) {
      for (int grp = 0; grp < groups; ++grp) {
        __syncthreads();
        if (gp.group != grp) continue;
#pragma unroll
        for (int q = 0; q < kPSlots; ++q) {
          const int64_t c = gp.t + static_cast<int64_t>(q) * tpr;
          if (c * VEC >= K) continue;
#pragma unroll
          for (int e = 0; e < VEC; ++e) {
            const A v = which == 0 ? pw[q][e] : pb[q][e];
            const int64_t col = c * VEC + e;
            colsum[col] = grp == 0 ? v : colsum[col] + v;
          }
        }
      }
      __syncthreads();
      A* out = partials + (static_cast<int64_t>(which) * gridDim.x + blockIdx.x) * K;
      for (int64_t j = threadIdx.x; j < K; j += blockDim.x) out[j] = colsum[j];
    }
  }
}

// For plan_rows: a pointer it finds misaligned when x (of XD, read VEC
// elements at a time beside rows of TD) cannot take vector loads.
template <typename XD, typename TD>
const void* x_alignment(const void* x) {
  const size_t bytes = static_cast<size_t>(kVecOf<TD>) * sizeof(XD);
  return reinterpret_cast<uintptr_t>(x) % bytes == 0 ? nullptr : reinterpret_cast<const void*>(uintptr_t{1});
}

template <typename XD, typename TD>
void forward(OpCall& call, int device, cudaStream_t st) {
  using A = acc_t<TD>;
  const Tensor &x = call.in(0), &res = call.in(1), &sum = call.out(3);
  const auto& a = call.attrs<DropoutAddLayerNormAttrs>();
  const int64_t M = x.shape()[0], K = x.shape()[1];
  const XD* xp = static_cast<const XD*>(x.data_ptr());
  const TD* rp = static_cast<const TD*>(res.data_ptr());
  TD* yp = static_cast<TD*>(call.out(0).data_ptr());
  TD* sp = sum.defined() ? static_cast<TD*>(sum.data_ptr()) : nullptr;
  A* mp = static_cast<A*>(call.out(1).data_ptr());
  A* rsp = static_cast<A*>(call.out(2).data_ptr());
  const DropArgs drop = drop_args(a, device);
  const RowPlan p =
      plan_rows(M, K, sizeof(TD), sizeof(A), {rp, yp, sp, x_alignment<XD, TD>(xp)}, device, true, kForwardCacheElems);
  with_row_layout<TD>(p, [&](auto vec, auto cached) {
    constexpr int V = decltype(vec)::value;
    constexpr bool C = decltype(cached)::value;
    auto go = [&](auto kernel) {
      kernel<<<p.blocks, p.threads, 0, st>>>(xp, rp, param<TD>(call.in(2)), param<TD>(call.in(3)), yp, sp, mp, rsp, M,
                                             K, static_cast<A>(a.eps), p.tpr, drop);
    };
    if (a.p > 0.0)
      go(forward_kernel<XD, TD, V, C, true>);
    else
      go(forward_kernel<XD, TD, V, C, false>);
  });
  HEARTH_CUDA_CHECK_LAUNCH();
}

template <typename XD, typename TD>
void backward(OpCall& call, int device, cudaStream_t st) {
  using A = acc_t<TD>;
  static_assert(std::is_same_v<A, float>, "the partial sums are float32");
  const Tensor &g = call.in(0), &sum = call.in(1);
  const Tensor &gx = call.out(0), &gres = call.out(1), &gw = call.out(2), &gb = call.out(3);
  const auto& a = call.attrs<DropoutAddLayerNormAttrs>();
  const int64_t M = sum.shape()[0], K = sum.shape()[1];
  const TD* gp = static_cast<const TD*>(g.data_ptr());
  const TD* sp = static_cast<const TD*>(sum.data_ptr());
  const A* mp = static_cast<const A*>(call.in(2).data_ptr());
  const A* rp = static_cast<const A*>(call.in(3).data_ptr());
  XD* gxp = gx.defined() ? static_cast<XD*>(gx.data_ptr()) : nullptr;
  TD* grp = gres.defined() ? static_cast<TD*>(gres.data_ptr()) : nullptr;
  const bool want_params = gw.defined() || gb.defined();
  const DropArgs drop = drop_args(a, device);
  const Device dev = sum.device();
  RowPlan p = plan_rows(M, K, sizeof(TD), sizeof(A), {gp, sp, grp, x_alignment<XD, TD>(gxp)}, device, true,
                        kBackwardCacheElems);
  // With the parameter sums in the kernel, one wave of blocks (each walks
  // its rows), so that each block's row of partials covers many rows.
  const bool fused_params = want_params && p.cached;
  Tensor partials;
  int64_t chunks = 0;
  with_row_layout<TD>(p, [&](auto vec, auto cached) {
    constexpr int V = decltype(vec)::value;
    constexpr bool C = decltype(cached)::value;
    auto go = [&](auto kernel, bool params) {
      size_t smem = 0;
      unsigned blocks = p.blocks;
      A* pp = nullptr;
      if (params) {
        smem = static_cast<size_t>(K) * sizeof(A);
        int per_sm = 0;
        HEARTH_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, p.threads, smem));
        blocks = std::min<unsigned>(blocks, static_cast<unsigned>(std::max(per_sm, 1) * sm_count(device)));
        chunks = blocks;
        partials = Tensor::empty({2, chunks, K}, DType::float32, dev);
        pp = static_cast<A*>(partials.data_ptr());
      }
      kernel<<<blocks, p.threads, smem, st>>>(gp, sp, mp, rp, param<TD>(call.in(4)), gxp, grp, pp, M, K, p.tpr, drop);
    };
    if constexpr (C) {
      if (fused_params) {
        if (a.p > 0.0)
          go(backward_kernel<XD, TD, V, C, true, true>, true);
        else
          go(backward_kernel<XD, TD, V, C, false, true>, true);
        return;
      }
    }
    if (!gxp && !grp) return;  // only the parameters' gradients, from the column pass below
    if (a.p > 0.0)
      go(backward_kernel<XD, TD, V, C, true, false>, false);
    else
      go(backward_kernel<XD, TD, V, C, false, false>, false);
  });
  HEARTH_CUDA_CHECK_LAUNCH();
  if (!want_params) return;
  if (!fused_params) {
    const int64_t col_tiles = (K + 31) / 32;
    const int64_t target_blocks = static_cast<int64_t>(sm_count(device)) * 8;
    chunks = std::clamp<int64_t>((target_blocks + col_tiles - 1) / col_tiles, 1, std::min<int64_t>(1024, (M + 7) / 8));
    partials = Tensor::empty({2, chunks, K}, DType::float32, dev);
    layer_norm_param_partials_kernel<TD>
        <<<dim3(static_cast<unsigned>(col_tiles), static_cast<unsigned>(chunks)), dim3(32, 8), 0, st>>>(
            gp, sp, mp, rp, M, K, static_cast<A*>(partials.data_ptr()));
    HEARTH_CUDA_CHECK_LAUNCH();
  }
  layer_norm_param_final_kernel<TD><<<channel_blocks(K), 256, 0, st>>>(static_cast<const A*>(partials.data_ptr()),
                                                                       chunks, K, param<TD>(gw), param<TD>(gb));
  HEARTH_CUDA_CHECK_LAUNCH();
}

// f<XD, TD>() for x's dtype and the residual's: the same, or a half x beside
// a float32 residual.
template <template <typename, typename> class F, typename... Args>
void with_pair(DType xd, DType td, const char* op, Args&&... args) {
  HEARTH_CUDA_DISPATCH_IN(kDtypes, xd, op, [&] {
    using XD = scalar_t;
    if (xd == td) return F<XD, XD>::run(args...);
    if constexpr (!std::is_same_v<XD, float>) {
      if (td == DType::float32) return F<XD, float>::run(args...);
    }
    HEARTH_THROW(TypeError, "[", op, "] no CUDA kernel for x of ", dtype_name(xd), " beside ", dtype_name(td));
  });
}

template <typename XD, typename TD>
struct Forward {
  static void run(OpCall& call, int device, cudaStream_t st) { forward<XD, TD>(call, device, st); }
};
template <typename XD, typename TD>
struct Backward {
  static void run(OpCall& call, int device, cudaStream_t st) { backward<XD, TD>(call, device, st); }
};

void dropout_add_layer_norm_forward(OpCall& call) {
  const Tensor &x = call.in(0), &res = call.in(1);
  const int device = x.device().index;
  activate(device);
  if (x.numel() == 0) return;
  with_pair<Forward>(x.dtype(), res.dtype(), "dropout_add_layer_norm", call, device, stream(device));
}

void dropout_add_layer_norm_backward(OpCall& call) {
  const Tensor &sum = call.in(1), &gx = call.out(0);
  const int device = sum.device().index;
  activate(device);
  if (sum.numel() == 0) return;
  with_pair<Backward>(gx.defined() ? gx.dtype() : sum.dtype(), sum.dtype(), "dropout_add_layer_norm_backward", call,
                      device, stream(device));
}

HEARTH_REGISTER_KERNEL(dropout_add_layer_norm, cuda_kind(), dropout_add_layer_norm_forward, kDtypes);
HEARTH_REGISTER_KERNEL(dropout_add_layer_norm_backward, cuda_kind(), dropout_add_layer_norm_backward, kDtypes);

}  // namespace
}  // namespace hearth::cuda
