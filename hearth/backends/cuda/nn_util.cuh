// Building blocks of the CUDA nn kernels (norms, softmax, losses): reductions
// inside a group of threads that owns one row, rows read with 16-byte vector
// loads and optionally kept in registers between passes, and optional
// per-channel parameters whose dtype is either the input's or its accumulation
// type (mixed precision keeps float32 parameters beside bfloat16 activations).
#pragma once

#include <algorithm>
#include <cstdint>

#include <cuda/std/limits>

#include "hearth/backends/cuda/context.h"
#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/device_types.cuh"
#include "hearth/backends/cuda/row_loop.cuh"
#include "hearth/core/tensor.h"

namespace hearth::cuda::nn {

template <typename A>
__device__ __forceinline__ A dev_exp(A v) {
  if constexpr (std::is_same_v<A, double>) return ::exp(v);
  else return ::expf(v);
}
template <typename A>
__device__ __forceinline__ A dev_log(A v) {
  if constexpr (std::is_same_v<A, double>) return ::log(v);
  else return ::logf(v);
}
template <typename A>
__device__ __forceinline__ A dev_inf() {
  return ::cuda::std::numeric_limits<A>::infinity();
}
template <typename A>
__device__ __forceinline__ A dev_nan() {
  return ::cuda::std::numeric_limits<A>::quiet_NaN();
}
template <typename A>
__device__ __forceinline__ A dev_sqrt(A v) {
  if constexpr (std::is_same_v<A, double>) return ::sqrt(v);
  else return ::sqrtf(v);
}
template <typename A>
__device__ __forceinline__ bool dev_isinf(A v) {
  return v == dev_inf<A>() || v == -dev_inf<A>();
}

struct SumOp {
  template <typename A>
  __device__ A operator()(A a, A b) const {
    return a + b;
  }
};
// Keeps the running value when the other is NaN, like std::max on the CPU.
struct MaxOp {
  template <typename A>
  __device__ A operator()(A a, A b) const {
    return a < b ? b : a;
  }
};

// Reduces each of v[0..N) across aligned groups of `width` lanes (a power of two <= 32).
template <int N, typename A, typename Op>
__device__ __forceinline__ void warp_reduce(A (&v)[N], Op op, int width) {
  for (int o = width / 2; o > 0; o /= 2) {
#pragma unroll
    for (int k = 0; k < N; ++k) v[k] = op(v[k], __shfl_xor_sync(0xffffffffu, v[k], o));
  }
}

// Reduces v[0..N) across the `tpr` threads owning one row (a power of two;
// groups are consecutive threads of a 1-D block of at most 1024). Every thread
// of the block calls it the same number of times; every thread of a group gets
// the result. `smem` holds N * 32 values.
template <int N, typename A, typename Op>
__device__ __forceinline__ void group_reduce(A (&v)[N], Op op, int tpr, A* smem) {
  warp_reduce<N>(v, op, tpr < 32 ? tpr : 32);
  if (tpr <= 32) return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = tpr / 32;
  const int first = (static_cast<int>(threadIdx.x) / tpr) * warps;  // first warp of this group
  __syncthreads();  // the previous reduction's readers are done with smem
  if (lane == 0) {
#pragma unroll
    for (int k = 0; k < N; ++k) smem[k * 32 + warp] = v[k];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < N; ++k) {
    A r = smem[k * 32 + first];
    for (int w = 1; w < warps; ++w) r = op(r, smem[k * 32 + first + w]);
    v[k] = r;
  }
}

template <typename A, typename Op>
__device__ __forceinline__ A group_reduce1(A v, Op op, int tpr, A* smem) {
  A a[1] = {v};
  group_reduce<1>(a, op, tpr, smem);
  return a[0];
}

// Reduces v[0..N) over a whole (1-, 2- or 3-D) block of a multiple of 32
// threads; every thread gets the result. `smem` holds N * 32 values.
template <int N, typename A, typename Op>
__device__ __forceinline__ void block_reduce(A (&v)[N], Op op, A* smem) {
  const int tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  const int warps = blockDim.x * blockDim.y * blockDim.z / 32;
  warp_reduce<N>(v, op, 32);
  if (warps == 1) return;
  __syncthreads();
  if (tid % 32 == 0) {
#pragma unroll
    for (int k = 0; k < N; ++k) smem[k * 32 + tid / 32] = v[k];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < N; ++k) {
    A r = smem[k * 32];
    for (int w = 1; w < warps; ++w) r = op(r, smem[k * 32 + w]);
    v[k] = r;
  }
}

// Reduces v across the threadIdx.y of a block for each threadIdx.x (blockDim.y
// a power of two); every thread gets its column's result, in a fixed order.
// `smem` holds blockDim.x * blockDim.y values.
template <typename A, typename Op>
__device__ __forceinline__ A column_reduce(A v, Op op, A* smem) {
  const int tx = threadIdx.x, ty = threadIdx.y, nx = blockDim.x;
  __syncthreads();
  smem[ty * nx + tx] = v;
  __syncthreads();
  for (int s = blockDim.y / 2; s > 0; s /= 2) {
    if (ty < s) smem[ty * nx + tx] = op(smem[ty * nx + tx], smem[(ty + s) * nx + tx]);
    __syncthreads();
  }
  return smem[tx];
}

// Elements of D in one 16-byte load.
template <typename D>
inline constexpr int kVecOf = static_cast<int>(16 / sizeof(D));

template <typename D, int N>
struct alignas(sizeof(D) * N) Pack {
  D v[N];
};

// Chunks of `vec` elements a thread keeps in registers per cached row input:
// 32 values (16 for double, whose values take two registers each), halved for
// scalar loads, whose separate bounds checks and addresses cost registers too.
// A kernel with more live state of its own asks for fewer values (`elems`).
constexpr int cache_chunks(size_t acc_size, int vec, int elems = 0) {
  if (elems == 0) elems = acc_size == 8 ? 16 : 32;
  return vec == 1 ? elems / 2 : elems / vec;
}

// N dense input rows of K elements (all of dtype D), walked by the `tpr`
// threads of a group: thread t owns chunks t, t + tpr, ... of VEC elements.
// Cached rows are loaded once into registers; uncached ones are re-read from
// global memory on each pass (rows too long for registers, or single-pass use).
template <typename D, int VEC, bool kCached, int N, int kCacheElems = 0>
struct Rows {
  using A = acc_t<D>;
  static constexpr int kSlots = kCached ? cache_chunks(sizeof(A), VEC, kCacheElems) : 1;
  const D* in[N];
  int64_t K;
  int t, tpr;
  bool active;
  A cache[N][kSlots][VEC];

  __device__ Rows(const D* const (&rows)[N], int64_t k, int thread, int threads, bool act)
      : K(k), t(thread), tpr(threads), active(act) {
#pragma unroll
    for (int n = 0; n < N; ++n) in[n] = rows[n];
    if constexpr (kCached) {
#pragma unroll
      for (int q = 0; q < kSlots; ++q) {
        const int64_t c = t + static_cast<int64_t>(q) * tpr;
        if (active && c * VEC < K) {
#pragma unroll
          for (int n = 0; n < N; ++n) load(n, c, cache[n][q]);
        }
      }
    }
  }

  __device__ void load(int n, int64_t chunk, A (&out)[VEC]) const {
    if constexpr (VEC == 1) {
      out[0] = to_acc(in[n][chunk]);
    } else {
      const Pack<D, VEC> p = reinterpret_cast<const Pack<D, VEC>*>(in[n])[chunk];
#pragma unroll
      for (int e = 0; e < VEC; ++e) out[e] = to_acc(p.v[e]);
    }
  }

  // f(col, vals) with vals[n] the value of input n at column col. In cached
  // mode f may change vals (later passes see the change); in uncached mode the
  // change is lost.
  template <typename F>
  __device__ void each(F&& f) {
    if (!active) return;
    if constexpr (kCached) {
#pragma unroll
      for (int q = 0; q < kSlots; ++q) {
        const int64_t c = t + static_cast<int64_t>(q) * tpr;
        if (c * VEC < K) {
#pragma unroll
          for (int e = 0; e < VEC; ++e) {
            A v[N];
#pragma unroll
            for (int n = 0; n < N; ++n) v[n] = cache[n][q][e];
            f(c * VEC + e, v);
#pragma unroll
            for (int n = 0; n < N; ++n) cache[n][q][e] = v[n];
          }
        }
      }
    } else {
#pragma unroll 2
      for (int64_t c = t; c * VEC < K; c += tpr) {
        A x[N][VEC];
#pragma unroll
        for (int n = 0; n < N; ++n) load(n, c, x[n]);
#pragma unroll
        for (int e = 0; e < VEC; ++e) {
          A v[N];
#pragma unroll
          for (int n = 0; n < N; ++n) v[n] = x[n][e];
          f(c * VEC + e, v);
        }
      }
    }
  }

  // out[col] = f(col, vals), written VEC elements at a time.
  template <typename F>
  __device__ void store(D* out, F&& f) {
    if (!active) return;
    if constexpr (kCached) {
#pragma unroll
      for (int q = 0; q < kSlots; ++q) {
        const int64_t c = t + static_cast<int64_t>(q) * tpr;
        if (c * VEC >= K) continue;
        A x[N][VEC];
#pragma unroll
        for (int n = 0; n < N; ++n)
#pragma unroll
          for (int e = 0; e < VEC; ++e) x[n][e] = cache[n][q][e];
        write_chunk(out, c, x, f);
      }
    } else {
#pragma unroll 2
      for (int64_t c = t; c * VEC < K; c += tpr) {
        A x[N][VEC];
#pragma unroll
        for (int n = 0; n < N; ++n) load(n, c, x[n]);
        write_chunk(out, c, x, f);
      }
    }
  }

 private:
  template <typename F>
  __device__ void write_chunk(D* out, int64_t c, const A (&x)[N][VEC], F& f) const {
    Pack<D, VEC> p;
#pragma unroll
    for (int e = 0; e < VEC; ++e) {
      A v[N];
#pragma unroll
      for (int n = 0; n < N; ++n) v[n] = x[n][e];
      p.v[e] = from_acc<D>(f(c * VEC + e, v));
    }
    reinterpret_cast<Pack<D, VEC>*>(out)[c] = p;
  }
};

// Row kernels run at most this many threads per block, so a thread may keep
// two cached rows in registers (128 per thread at 512 threads).
inline constexpr int kMaxRowThreads = 512;

// ---- host-side launch planning ----

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

inline int pow2_at_least(int64_t n) {
  int p = 1;
  while (p < n && p < (1 << 30)) p *= 2;
  return p;
}

// Blocks of 256 threads for a kernel with one thread per channel (or column)
// walking the channels with a grid stride past the cap.
inline unsigned channel_blocks(int64_t C) { return static_cast<unsigned>(std::min<int64_t>((C + 255) / 256, 4096)); }

// How M rows of K elements are spread over threads: `tpr` threads per row (a
// power of two), `threads` per block (one row group per block above 32),
// 16-byte loads when every row of every operand is 16-byte aligned, rows kept
// in registers when `cache` is asked for and they fit (`cache_elems` as the
// kernel's Rows, 0 for the default).
struct RowPlan {
  int tpr = 1;
  int threads = 256;
  unsigned blocks = 0;
  bool vec = false;
  bool cached = false;
};

inline RowPlan plan_rows(int64_t M, int64_t K, size_t elem, size_t acc, std::initializer_list<const void*> ptrs,
                         int device, bool cache, int cache_elems = 0) {
  RowPlan p;
  const int width = static_cast<int>(16 / elem);
  p.vec = width > 1 && (K * static_cast<int64_t>(elem)) % 16 == 0;
  for (const void* ptr : ptrs) p.vec = p.vec && aligned16(ptr);
  const int v = p.vec ? width : 1;
  const int64_t chunks = (K + v - 1) / v;
  const int per_thread = cache ? cache_chunks(acc, v, cache_elems) : 4;
  p.tpr = pow2_at_least((chunks + per_thread - 1) / per_thread);
  p.cached = cache && p.tpr <= kMaxRowThreads;
  p.tpr = std::min(p.tpr, kMaxRowThreads);
  // Few rows: spread each over more threads so the whole GPU works.
  const int64_t want = static_cast<int64_t>(sm_count(device)) * 2048;
  while (p.tpr < kMaxRowThreads && M * p.tpr < want && 2 * p.tpr <= chunks) p.tpr *= 2;
  p.threads = std::max(p.tpr, 256);
  p.blocks = row_grid(M, p.threads / p.tpr, device);
  return p;
}

// Lines along a strided dim of [outer, D, inner] (inner > 1): a block is a
// tile of bx adjacent lines (coalesced along inner) by `by` threads splitting D,
// bx * by <= 256, both powers of two.
struct ColPlan {
  dim3 block;
  unsigned blocks = 0;
  int64_t tiles = 0;  // tiles per outer index
};

inline ColPlan plan_cols(int64_t outer, int64_t D, int64_t inner, int device) {
  int bx = std::min(pow2_at_least(inner), 256);
  int by = 256 / bx;
  if (by > pow2_at_least(D)) {
    by = pow2_at_least(D);
    bx = std::min(256 / by, pow2_at_least(inner));
  }
  ColPlan p;
  p.block = dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by));
  p.tiles = (inner + bx - 1) / bx;
  p.blocks = static_cast<unsigned>(std::min<int64_t>(outer * p.tiles, static_cast<int64_t>(sm_count(device)) * 32));
  return p;
}

template <int V>
struct IntTag {
  static constexpr int value = V;
};
template <bool B>
struct BoolTag {
  static constexpr bool value = B;
};

// Calls launch(IntTag<VEC>, BoolTag<cached>) with the plan's choices, so each
// row kernel is instantiated for the four layouts only.
template <typename D, typename F>
void with_row_layout(const RowPlan& p, F&& launch) {
  constexpr int kVec = kVecOf<D>;
  if (p.vec) {
    if (p.cached) launch(IntTag<kVec>{}, BoolTag<true>{});
    else launch(IntTag<kVec>{}, BoolTag<false>{});
  } else {
    if (p.cached) launch(IntTag<1>{}, BoolTag<true>{});
    else launch(IntTag<1>{}, BoolTag<false>{});
  }
}

// ---- optional parameters of dtype D or acc_t<D> ----

template <typename D>
struct Param {
  void* p = nullptr;
  bool wide = false;  // stored as acc_t<D> (float32 beside a half input)
  __device__ acc_t<D> get(int64_t i, acc_t<D> absent) const {
    if (!p) return absent;
    return wide ? static_cast<const acc_t<D>*>(p)[i] : to_acc(static_cast<const D*>(p)[i]);
  }
  __device__ void set(int64_t i, double v) const {
    if (wide) static_cast<acc_t<D>*>(p)[i] = static_cast<acc_t<D>>(v);
    else static_cast<D*>(p)[i] = from_acc<D>(static_cast<acc_t<D>>(v));
  }
};

template <typename D>
Param<D> param(const Tensor& t) {
  if (!t.defined()) return {};
  return {t.data_ptr(), t.element_size() != sizeof(D)};
}

// Class or row indices, int64 or int32.
struct Index {
  const void* p = nullptr;
  bool wide = true;
  __device__ int64_t operator[](int64_t i) const {
    return wide ? static_cast<const int64_t*>(p)[i] : static_cast<const int32_t*>(p)[i];
  }
};
inline Index index_of(const Tensor& t) { return {t.data_ptr(), t.dtype() == DType::int64}; }

}  // namespace hearth::cuda::nn
