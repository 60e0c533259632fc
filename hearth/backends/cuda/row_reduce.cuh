// The engine under every CUDA row reduction: x [outer, inner] dense -> one
// result per row. A reducer describes the state one thread folds elements
// into, how two states combine and how a row's final state is written.
//
// Rows are spread over groups of `tpr` threads (a power of two): a few lanes of
// a warp for short rows, a whole block for long ones. When even block-wide
// groups leave the GPU idle (few long rows) each row is cut into segments that
// separate groups reduce into a scratch buffer, and a second kernel combines a
// row's segments. Every state is combined in an order fixed by the shape and
// the device alone, without atomics, so results are bitwise reproducible.
//
// A reducer R provides:
//   using In = device element type; using State = trivially copyable state;
//   __device__ State init() const;                          the identity
//   __device__ void add(State&, In v, int64_t col) const;   col: index in the row
//   __device__ State combine(State a, State b) const;       commutative
//   __device__ static State shfl_xor(State s, int mask);    a warp shuffle of every field
//   __device__ void finish(int64_t row, State s) const;     writes the row's outputs
#pragma once

#include <algorithm>
#include <cstdint>

#include "hearth/backends/cuda/context.h"
#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/device_types.cuh"
#include "hearth/core/tensor.h"

namespace hearth::cuda::rowred {

inline constexpr int kMaxGroup = 512;  // threads of the widest group (one block)
inline constexpr int kPerThread = 4;   // loads a thread makes before a wider group pays off

// Combines the states of the `tpr` threads of a group; the result is valid in
// the group's first thread. Groups wider than a warp are whole warps; every
// thread of the block calls it equally often. `smem` holds a state per warp.
template <typename R, typename S>
__device__ __forceinline__ S group_reduce(const R& r, S s, int tpr, S* smem) {
  const int width = tpr < 32 ? tpr : 32;
  for (int o = width / 2; o > 0; o /= 2) s = r.combine(s, R::shfl_xor(s, o));
  if (tpr <= 32) return s;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = tpr / 32;
  const int first = warp - (threadIdx.x % tpr) / 32;  // the group's first warp
  __syncthreads();  // readers of the previous round are done with smem
  if (lane == 0) smem[warp] = s;
  __syncthreads();
  if (warp == first) {
    s = lane < warps ? smem[first + lane] : r.init();
    for (int o = 16; o > 0; o /= 2) s = r.combine(s, R::shfl_xor(s, o));
  }
  return s;
}

template <typename D, int N>
struct alignas(sizeof(D) * N) Pack {
  D v[N];
};

// Folds columns [begin, end) of one row into s: thread t of the group takes
// chunks t, t + tpr, ... of VEC elements, four chunks in flight at a time.
// With VEC > 1, begin and end are multiples of VEC and the row is 16-byte aligned.
template <int VEC, typename R, typename S, typename In>
__device__ __forceinline__ void fold_range(const R& r, S& s, const In* row, int64_t begin, int64_t end, int t,
                                           int tpr) {
  using P = Pack<In, VEC>;
  const P* chunks = reinterpret_cast<const P*>(row);
  const int64_t cend = (end + VEC - 1) / VEC;
  int64_t c = begin / VEC + t;
  for (; c + 3 * static_cast<int64_t>(tpr) < cend; c += 4 * static_cast<int64_t>(tpr)) {
    P p[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) p[u] = chunks[c + u * tpr];
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
      for (int e = 0; e < VEC; ++e) r.add(s, p[u].v[e], (c + u * tpr) * VEC + e);
  }
  for (; c < cend; c += tpr) {
    const P p = chunks[c];
#pragma unroll
    for (int e = 0; e < VEC; ++e) r.add(s, p.v[e], c * VEC + e);
  }
}

// One pass: each group reduces item (row, segment) and writes the row's result
// (segs == 1) or the segment's state to partial[item].
template <typename R, int VEC>
__global__ void __launch_bounds__(kMaxGroup)
    reduce_rows_kernel(R r, const typename R::In* __restrict__ x, int64_t outer, int64_t inner, int64_t seg_len,
                       int64_t segs, typename R::State* __restrict__ partial, int tpr) {
  using S = typename R::State;
  __shared__ S smem[32];
  const int groups = blockDim.x / tpr;
  const int g = threadIdx.x / tpr, t = threadIdx.x % tpr;
  const int64_t items = outer * segs;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * groups; base < items;
       base += static_cast<int64_t>(gridDim.x) * groups) {
    const int64_t item = base + g;
    S s = r.init();
    if (item < items) {
      const int64_t row = item / segs, seg = item % segs;
      const int64_t begin = seg * seg_len, end = begin + seg_len < inner ? begin + seg_len : inner;
      fold_range<VEC>(r, s, x + row * inner, begin, end, t, tpr);
    }
    s = group_reduce(r, s, tpr, smem);
    if (item < items && t == 0) {
      if (segs == 1) r.finish(item, s);
      else partial[item] = s;
    }
  }
}

// Second pass: a group per row combines its segments' states in a fixed order.
template <typename R>
__global__ void __launch_bounds__(kMaxGroup)
    combine_segments_kernel(R r, const typename R::State* __restrict__ partial, int64_t outer, int64_t segs, int tpr) {
  using S = typename R::State;
  __shared__ S smem[32];
  const int groups = blockDim.x / tpr;
  const int g = threadIdx.x / tpr, t = threadIdx.x % tpr;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * groups; base < outer;
       base += static_cast<int64_t>(gridDim.x) * groups) {
    const int64_t row = base + g;
    S s = r.init();
    if (row < outer)
      for (int64_t k = t; k < segs; k += tpr) s = r.combine(s, partial[row * segs + k]);
    s = group_reduce(r, s, tpr, smem);
    if (row < outer && t == 0) r.finish(row, s);
  }
}

inline int pow2_at_least(int64_t n) {
  int p = 1;
  while (p < n && p < (1 << 30)) p *= 2;
  return p;
}

// How a reduction of `outer` rows of `inner` elements is laid out on the GPU.
struct Plan {
  int tpr = 1;          // threads per group
  int threads = 256;    // per block: several groups when tpr < 256, else one
  unsigned blocks = 1;
  int64_t segs = 1;     // groups per row
  int64_t seg_len = 0;  // elements per segment (a multiple of the vector width)
  bool vec = false;     // 16-byte loads
};

inline unsigned grid_blocks(int64_t items, int groups_per_block, int device) {
  const int64_t blocks = (items + groups_per_block - 1) / groups_per_block;
  const int64_t cap = static_cast<int64_t>(context(device).props.multiProcessorCount) * 32;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, cap)));
}

inline Plan plan(int64_t outer, int64_t inner, size_t elem, const void* x, int device) {
  Plan p;
  const int64_t width = static_cast<int64_t>(16 / elem);
  p.vec = width > 1 && (inner * static_cast<int64_t>(elem)) % 16 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
  const int64_t v = p.vec ? width : 1;
  const int64_t chunks = (inner + v - 1) / v;
  p.tpr = std::min(kMaxGroup, pow2_at_least((chunks + kPerThread - 1) / kPerThread));
  // Threads resident on the whole GPU: below that, widen groups, then split rows.
  const int64_t want = static_cast<int64_t>(context(device).props.multiProcessorCount) * 2048;
  while (p.tpr < kMaxGroup && outer * p.tpr < want && 2 * p.tpr * kPerThread <= chunks) p.tpr *= 2;
  p.seg_len = inner;
  if (p.tpr == kMaxGroup && outer * kMaxGroup < want) {
    const int64_t by_gpu = (want + outer * kMaxGroup - 1) / (outer * kMaxGroup);
    const int64_t by_work = chunks / (static_cast<int64_t>(kMaxGroup) * kPerThread);
    const int64_t segs = std::min(by_gpu, std::max<int64_t>(by_work, 1));
    if (segs > 1) {
      const int64_t seg_chunks = (chunks + segs - 1) / segs;
      p.seg_len = seg_chunks * v;
      p.segs = (inner + p.seg_len - 1) / p.seg_len;
    }
  }
  p.threads = std::max(p.tpr, 256);
  p.blocks = grid_blocks(outer * p.segs, p.threads / p.tpr, device);
  return p;
}

// Reduces the dense rows of `x` ([outer, inner], dtype matching R::In) with `r`.
template <typename R>
void reduce_rows(const R& r, const Tensor& x, int64_t outer, int64_t inner) {
  using In = typename R::In;
  using S = typename R::State;
  if (outer == 0) return;
  const int device = x.device().index;
  const cudaStream_t s = stream(device);
  const In* xp = static_cast<const In*>(x.data_ptr());
  const Plan p = plan(outer, inner, sizeof(In), xp, device);
  Tensor scratch;
  S* partial = nullptr;
  if (p.segs > 1) {
    scratch = Tensor::empty({outer * p.segs * static_cast<int64_t>(sizeof(S))}, DType::uint8, x.device());
    partial = static_cast<S*>(scratch.data_ptr());
  }
  constexpr int kVec = sizeof(In) < 16 ? static_cast<int>(16 / sizeof(In)) : 1;
  if (p.vec)
    reduce_rows_kernel<R, kVec><<<p.blocks, p.threads, 0, s>>>(r, xp, outer, inner, p.seg_len, p.segs, partial, p.tpr);
  else
    reduce_rows_kernel<R, 1><<<p.blocks, p.threads, 0, s>>>(r, xp, outer, inner, p.seg_len, p.segs, partial, p.tpr);
  HEARTH_CUDA_CHECK_LAUNCH();
  if (p.segs > 1) {
    const int tpr = std::min<int>(kMaxGroup, pow2_at_least(p.segs));
    const int threads = std::max(tpr, 256);
    combine_segments_kernel<R><<<grid_blocks(outer, threads / tpr, device), threads, 0, s>>>(r, partial, outer, p.segs,
                                                                                           tpr);
    HEARTH_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace hearth::cuda::rowred
