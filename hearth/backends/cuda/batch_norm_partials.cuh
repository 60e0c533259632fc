// Per-channel partial sums over [N, C, S] tensors for the batch norm kernels
// (hearth/backends/cuda/batch_norm.cu): the statistics pass forward
// (shifted sums of x and x^2) and the gradient pass backward (sums of g and of
// g (x - mean)), with an optional ReLU mask on the first input and its masked
// copy written on the way. Channels-fastest inputs (S == 1: [N, C], NHWC
// images as [N*H*W, C]) have a kernel of their own (16-byte channel vectors,
// four rows in flight); the rest tile each channel's N x S elements. Partials
// come back in a small tensor that the per-channel finalize kernels merge in
// double, in a fixed order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>

#include "hearth/backends/cuda/nn_util.cuh"

namespace hearth::cuda::batch_norm_detail {

using namespace nn;

// a * b + c with one rounding, always: left to the compiler, contraction into
// a fused multiply-add may differ between instantiations of one kernel (vector
// widths, mask kinds), and the result with it in the last bit, so that the
// same call could give different float32 results by pointer alignment.
template <typename A>
__device__ __forceinline__ A fmadd(A a, A b, A c) {
  if constexpr (sizeof(A) == sizeof(float))
    return __fmaf_rn(a, b, c);
  else
    return __fma_rn(a, b, c);
}

// ---- per-channel partial sums over x [N, C, S] (and a second tensor of that shape) ----

// Sums of (x - pivot) and (x - pivot)^2, the pivot being the channel's first element.
template <typename D>
struct StatsTerms {
  static constexpr bool kTwoInputs = false;
  const D* x;
  int64_t S;
  __device__ acc_t<D> center(int64_t c) const { return to_acc(x[c * S]); }
  __device__ void add(acc_t<D> ctr, acc_t<D> xv, acc_t<D>, acc_t<D>& s0, acc_t<D>& s1) const {
    const acc_t<D> d = xv - ctr;
    s0 += d;
    s1 = fmadd(d, d, s1);
  }
};

// Sums of g and g * (x - mean).
template <typename D>
struct GradTerms {
  static constexpr bool kTwoInputs = true;
  const acc_t<D>* mean;
  __device__ acc_t<D> center(int64_t c) const { return mean[c]; }
  __device__ void add(acc_t<D> ctr, acc_t<D> gv, acc_t<D> xv, acc_t<D>& s0, acc_t<D>& s1) const {
    s0 += gv;
    s1 = fmadd(gv, xv - ctr, s1);
  }
};

// The fused ReLU's gradient: g where the saved output is positive, else 0
// (relu_backward's rule). Without a mask, g itself.
template <typename A>
__device__ __forceinline__ A relu_masked(A g, A y) {
  return y > A(0) ? g : A(0);
}

// The batch norm's value x * scale + shift as one rounding: the forward and
// the mask recomputed backward must agree bit for bit.
template <typename A>
__device__ __forceinline__ A bn_value(A x, A scale, A shift) {
  return fmadd(x, scale, shift);
}

// Backward's map grad_x = k g + b (x - mean) + d, rounded alike everywhere.
template <typename A>
__device__ __forceinline__ A bn_grad_value(A k, A g, A b, A x_minus_mean, A d) {
  return fmadd(k, g, fmadd(b, x_minus_mean, d));
}

// Whether the fused ReLU passed this element forward: its output, rounded to
// D, is positive (NaN is not), which is what the saved output says.
template <typename D>
__device__ __forceinline__ bool relu_passed(acc_t<D> x, acc_t<D> scale, acc_t<D> shift) {
  return to_acc(from_acc<D>(bn_value(x, scale, shift))) > acc_t<D>(0);
}

// Where backward's ReLU mask comes from, fixed per kernel instantiation so
// that a kernel without a mask carries none of its registers. saved: the
// saved output y (y > 0), for the fused residual, whose output depends on more
// than x. from_x: the forward's value recomputed from x (the second input of
// the gradient sums) and the forward's own affine map (scale, shift), saved
// [2][C]: the mask then costs no read of its own, a third less traffic for
// relu(batch_norm(x)) backward.
enum class MaskKind { none, saved, from_x };

template <typename D>
struct ReluMask {
  const D* y = nullptr;               // saved
  const acc_t<D>* affine = nullptr;   // from_x
};

// g masked by the ReLU: yv is the saved output (read for saved), xv the input,
// scale and shift the channel's map (for from_x).
template <typename D, MaskKind M>
__device__ __forceinline__ acc_t<D> relu_grad(acc_t<D> g, acc_t<D> yv, acc_t<D> xv, acc_t<D> scale, acc_t<D> shift) {
  if constexpr (M == MaskKind::saved) return relu_masked(g, yv);
  if constexpr (M == MaskKind::from_x) return relu_passed<D>(xv, scale, shift) ? g : acc_t<D>(0);
  return g;
}

// S > 1. Block (split, channel) walks its units (row n, tile of S) with blockDim.x
// threads along S and blockDim.y units at a time. Partials are [2][C][splits].
// masked_out, when given, receives a as summed (masked by the ReLU): every
// element is visited exactly once.
template <typename D, typename Terms, MaskKind M>
__global__ void channel_partials_kernel(const D* __restrict__ a, const D* __restrict__ b, ReluMask<D> mask,
                                        D* __restrict__ masked_out, int64_t N, int64_t C, int64_t S, int64_t tile,
                                        int64_t tiles, Terms terms, acc_t<D>* partials) {
  using A = acc_t<D>;
  __shared__ A smem[64];
  const int64_t splits = gridDim.x, units = N * tiles;
  for (int64_t c = blockIdx.y; c < C; c += gridDim.y) {
    const A ctr = terms.center(c);
    const A mscale = M == MaskKind::from_x ? mask.affine[c] : A(0);
    const A mshift = M == MaskKind::from_x ? mask.affine[C + c] : A(0);
    A s[2] = {0, 0};
    for (int64_t u = static_cast<int64_t>(blockIdx.x) * blockDim.y + threadIdx.y; u < units; u += splits * blockDim.y) {
      const int64_t n = u / tiles, i0 = (u % tiles) * tile;
      const int64_t i1 = i0 + tile < S ? i0 + tile : S;
      const int64_t row = (n * C + c) * S;
      for (int64_t i = i0 + threadIdx.x; i < i1; i += blockDim.x) {
        const A bv = Terms::kTwoInputs ? to_acc(b[row + i]) : A(0);
        const A yv = M == MaskKind::saved ? to_acc(mask.y[row + i]) : A(0);
        const A av = relu_grad<D, M>(to_acc(a[row + i]), yv, bv, mscale, mshift);
        if (masked_out) masked_out[row + i] = from_acc<D>(av);
        terms.add(ctr, av, bv, s[0], s[1]);
      }
    }
    block_reduce<2>(s, SumOp{}, smem);
    if (threadIdx.x == 0 && threadIdx.y == 0) {
      partials[c * splits + blockIdx.x] = s[0];
      partials[(C + c) * splits + blockIdx.x] = s[1];
    }
  }
}

// S == 1: R rows of C channels ([N, C] input, or an NHWC image as [N*H*W, C]).
// A block is a tile of blockDim.x threads along C, each owning VEC adjacent
// channels (one 16-byte load per row), by blockDim.y rows; when a tile spans a
// whole row, a warp reads consecutive rows, one contiguous run of memory. Split
// blockIdx.y takes the rows [R k / splits, R (k + 1) / splits), its threads
// every blockDim.y-th of them, four in flight. Partials are [2][splits][C].
// masked_out as channel_partials_kernel's.
// The work of one block, also run as the first phase of the single-kernel
// path (batch_norm_single_kernel.cu): split `split` of `splits`, channel tile
// `col_tile`; `smem` holds blockDim.x * blockDim.y values.
template <typename D, int VEC, typename Terms, MaskKind M>
__device__ __forceinline__ void row_partials_block(const D* __restrict__ a, const D* __restrict__ b,
                                                   ReluMask<D> mask, D* __restrict__ masked_out, int64_t R, int64_t C,
                                                   Terms terms, acc_t<D>* partials, int64_t split, int64_t splits,
                                                   int64_t col_tile, acc_t<D>* smem) {
  using A = acc_t<D>;
  using P = Pack<D, VEC>;
  constexpr int kInFlight = 4;
  const int64_t c0 = (col_tile * blockDim.x + threadIdx.x) * VEC;
  const bool active = c0 < C;
  A ctr[VEC], s0[VEC], s1[VEC], mscale[VEC], mshift[VEC];
#pragma unroll
  for (int e = 0; e < VEC; ++e) {
    ctr[e] = active ? terms.center(c0 + e) : A(0);
    s0[e] = s1[e] = 0;
    mscale[e] = M == MaskKind::from_x && active ? mask.affine[c0 + e] : A(0);
    mshift[e] = M == MaskKind::from_x && active ? mask.affine[C + c0 + e] : A(0);
  }
  if (active) {
    const int64_t r1 = R * (split + 1) / splits, step = blockDim.y;
    int64_t r = R * split / splits + threadIdx.y;
    for (; r + (kInFlight - 1) * step < r1; r += kInFlight * step) {
      P av[kInFlight], bv[kInFlight], mv[kInFlight];
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) {
        av[u] = *reinterpret_cast<const P*>(a + (r + u * step) * C + c0);
        if constexpr (Terms::kTwoInputs) bv[u] = *reinterpret_cast<const P*>(b + (r + u * step) * C + c0);
        if constexpr (M == MaskKind::saved) mv[u] = *reinterpret_cast<const P*>(mask.y + (r + u * step) * C + c0);
      }
#pragma unroll
      for (int u = 0; u < kInFlight; ++u) {
        P out;
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
          const A xv = Terms::kTwoInputs ? to_acc(bv[u].v[e]) : A(0);
          const A yv = M == MaskKind::saved ? to_acc(mv[u].v[e]) : A(0);
          const A v = relu_grad<D, M>(to_acc(av[u].v[e]), yv, xv, mscale[e], mshift[e]);
          out.v[e] = from_acc<D>(v);
          terms.add(ctr[e], v, xv, s0[e], s1[e]);
        }
        if (masked_out) *reinterpret_cast<P*>(masked_out + (r + u * step) * C + c0) = out;
      }
    }
    for (; r < r1; r += step) {
      const P av = *reinterpret_cast<const P*>(a + r * C + c0);
      P bv = av, mv = av;
      if constexpr (Terms::kTwoInputs) bv = *reinterpret_cast<const P*>(b + r * C + c0);
      if constexpr (M == MaskKind::saved) mv = *reinterpret_cast<const P*>(mask.y + r * C + c0);
      P out;
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        const A xv = Terms::kTwoInputs ? to_acc(bv.v[e]) : A(0);
        const A yv = M == MaskKind::saved ? to_acc(mv.v[e]) : A(0);
        const A v = relu_grad<D, M>(to_acc(av.v[e]), yv, xv, mscale[e], mshift[e]);
        out.v[e] = from_acc<D>(v);
        terms.add(ctr[e], v, xv, s0[e], s1[e]);
      }
      if (masked_out) *reinterpret_cast<P*>(masked_out + r * C + c0) = out;
    }
  }
#pragma unroll
  for (int e = 0; e < VEC; ++e) {
    s0[e] = column_reduce(s0[e], SumOp{}, smem);
    s1[e] = column_reduce(s1[e], SumOp{}, smem);
  }
  if (threadIdx.y == 0 && active) {
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      partials[split * C + c0 + e] = s0[e];
      partials[(splits + split) * C + c0 + e] = s1[e];
    }
  }
}

template <typename D, int VEC, typename Terms, MaskKind M>
__global__ void __launch_bounds__(256)
    row_partials_kernel(const D* __restrict__ a, const D* __restrict__ b, ReluMask<D> mask,
                        D* __restrict__ masked_out, int64_t R, int64_t C, Terms terms, acc_t<D>* partials) {
  __shared__ acc_t<D> smem[256];
  row_partials_block<D, VEC, Terms, M>(a, b, mask, masked_out, R, C, terms, partials, blockIdx.y, gridDim.y,
                                       blockIdx.x, smem);
}

// How rows of C channels are tiled: blockDim.x threads of VEC channels across
// (the whole row when it has at most 256 vectors), blockDim.y rows down (a
// power of two, 256 threads at most), about `blocks_per_sm` blocks per SM.
struct RowTiles {
  dim3 block;
  unsigned col_tiles = 0, row_blocks = 0;
};

inline RowTiles plan_row_tiles(int64_t R, int64_t C, int vec, int device, int64_t blocks_per_sm) {
  const int64_t chunks = (C + vec - 1) / vec;
  const int bx = static_cast<int>(std::min<int64_t>(chunks, 256));
  int by = 1;
  while (by * 2 * bx <= 256) by *= 2;
  RowTiles t;
  t.block = dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by));
  const int64_t col_tiles = (chunks + bx - 1) / bx;
  const int64_t target = static_cast<int64_t>(sm_count(device)) * blocks_per_sm;
  const int64_t most = std::max<int64_t>(1, std::min<int64_t>((R + by - 1) / by, 65535));
  t.col_tiles = static_cast<unsigned>(col_tiles);
  t.row_blocks = static_cast<unsigned>(std::clamp<int64_t>((target + col_tiles - 1) / col_tiles, 1, most));
  return t;
}

// 16 bytes of channels per thread when C and every pointer allow it, else 1.
template <typename D>
int row_vector(int64_t C, std::initializer_list<const void*> ptrs) {
  if (C % kVecOf<D> != 0) return 1;
  for (const void* p : ptrs)
    if (p && !aligned16(p)) return 1;
  return kVecOf<D>;
}

// Calls launch(IntTag<VEC>) for the chosen vector width.
template <typename D, typename F>
void with_row_vector(int vec, F&& launch) {
  if (vec > 1)
    launch(IntTag<kVecOf<D>>{});
  else
    launch(IntTag<1>{});
}

// The partial sums of a launch and how the finalize kernels read them.
template <typename A>
struct PartialSums {
  const A* p = nullptr;
  int64_t C = 0, splits = 0;
  bool split_major = false;  // [2][splits][C], else [2][C][splits]
  // Channel c's two sums over its splits, in double, by a block of
  // kFinalizeChannels x kFinalizeLanes threads (finalize_block()): lane l adds
  // splits l, l + lanes, ... in order, then lane 0 adds the lanes' sums in
  // order, so the result depends on the shape alone. Every thread of the block
  // calls it (it synchronises); the sums are valid in lane 0 of an active
  // channel. One thread walking all splits (hundreds: the partial-sum kernels
  // run four blocks per SM) was a chain of dependent L2 round trips, ~0.1 ms
  // per call whatever the tensor's size.
  __device__ void block_sum(int64_t c, bool active, double& s0, double& s1, double (*smem)[2][32]) const;
  // Channel c's two sums by one whole warp (the single-kernel path's merge):
  // lane l adds splits l, l + 32, ... in order, then a butterfly of shuffles
  // combines the lanes, a fixed order too. Every lane gets the sums.
  __device__ void warp_sum(int64_t c, int lane, double& s0, double& s1) const;
};

inline constexpr int kFinalizeChannels = 32;
inline constexpr int kFinalizeLanes = 16;
inline dim3 finalize_block() { return dim3(kFinalizeChannels, kFinalizeLanes); }
inline unsigned finalize_blocks(int64_t C) {
  return static_cast<unsigned>(std::clamp<int64_t>((C + kFinalizeChannels - 1) / kFinalizeChannels, 1, 4096));
}

template <typename A>
__device__ void PartialSums<A>::block_sum(int64_t c, bool active, double& s0, double& s1, double (*smem)[2][32]) const {
  const int64_t cs = split_major ? 1 : splits, ks = split_major ? C : 1;
  double a0 = 0, a1 = 0;
  if (active) {
#pragma unroll 4
    for (int64_t k = threadIdx.y; k < splits; k += blockDim.y) {
      a0 += p[c * cs + k * ks];
      a1 += p[C * splits + c * cs + k * ks];
    }
  }
  __syncthreads();  // the previous channel tile's reads of smem are done
  smem[threadIdx.y][0][threadIdx.x] = a0;
  smem[threadIdx.y][1][threadIdx.x] = a1;
  __syncthreads();
  if (threadIdx.y == 0) {
    for (unsigned l = 0; l < blockDim.y; ++l) {
      s0 += smem[l][0][threadIdx.x];
      s1 += smem[l][1][threadIdx.x];
    }
  }
}

template <typename A>
__device__ void PartialSums<A>::warp_sum(int64_t c, int lane, double& s0, double& s1) const {
  const int64_t cs = split_major ? 1 : splits, ks = split_major ? C : 1;
  double v[2] = {0, 0};
#pragma unroll 4
  for (int64_t k = lane; k < splits; k += 32) {
    v[0] += p[c * cs + k * ks];
    v[1] += p[C * splits + c * cs + k * ks];
  }
  warp_reduce<2>(v, SumOp{}, 32);
  s0 = v[0];
  s1 = v[1];
}

struct Partials {
  Tensor sums;  // 2 * C * splits values of the accumulation type
  int64_t splits = 0;
  bool split_major = false;
  template <typename A>
  PartialSums<A> view(int64_t C) const {
    if (!sums.defined()) return {};
    return {static_cast<const A*>(sums.data_ptr()), C, splits, split_major};
  }
};

// Launches the partial sums of [N, C, S]; N * S > 0. masked_out (optional)
// receives a, masked by the ReLU where a mask is given (affine masks need b = x).
template <typename D, MaskKind M, typename Terms>
Partials channel_partials(const D* a, const D* b, ReluMask<D> mask, D* masked_out, int64_t N, int64_t C, int64_t S,
                          Terms terms, DType acc_dtype, Device dev, cudaStream_t s) {
  Partials out;
  if (S == 1) {
    // About four blocks per SM keep enough loads in flight; more only lengthen
    // the finalize's serial sum over splits.
    const int vec = row_vector<D>(C, {a, b, mask.y, masked_out});
    const RowTiles t = plan_row_tiles(N, C, vec, dev.index, 4);
    out.splits = t.row_blocks;
    out.split_major = true;
    out.sums = Tensor::empty({2, out.splits, C}, acc_dtype, dev);
    with_row_vector<D>(vec, [&](auto v) {
      row_partials_kernel<D, decltype(v)::value, Terms, M><<<dim3(t.col_tiles, t.row_blocks), t.block, 0, s>>>(
          a, b, mask, masked_out, N, C, terms, static_cast<acc_t<D>*>(out.sums.data_ptr()));
    });
  } else {
    const int64_t target_blocks = static_cast<int64_t>(sm_count(dev.index)) * 8;
    const int bx = std::min(pow2_at_least(S), 256), by = 256 / bx;
    // Rows are cut into tiles only when there are too few rows to share out.
    const int64_t per_channel = std::max<int64_t>(1, (target_blocks + C - 1) / C);
    const int64_t max_tiles = (S + bx - 1) / bx;
    int64_t tiles = std::clamp<int64_t>((per_channel * by + N - 1) / std::max<int64_t>(N, 1), 1, max_tiles);
    const int64_t tile = ((S + tiles - 1) / tiles + bx - 1) / bx * bx;
    tiles = (S + tile - 1) / tile;
    const int64_t units = N * tiles;
    out.splits = std::clamp<int64_t>(per_channel, 1, std::max<int64_t>(1, (units + by - 1) / by));
    out.sums = Tensor::empty({2, C, out.splits}, acc_dtype, dev);
    const dim3 grid(static_cast<unsigned>(out.splits), static_cast<unsigned>(std::min<int64_t>(C, 65535)));
    channel_partials_kernel<D, Terms, M><<<grid, dim3(bx, by), 0, s>>>(a, b, mask, masked_out, N, C, S, tile, tiles, terms,
                                                                    static_cast<acc_t<D>*>(out.sums.data_ptr()));
  }
  HEARTH_CUDA_CHECK_LAUNCH();
  return out;
}

}  // namespace hearth::cuda::batch_norm_detail
