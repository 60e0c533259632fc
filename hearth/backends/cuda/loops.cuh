// The elementwise engine of the CUDA backend: any number of operands with one
// common (broadcast) shape and arbitrary strides. The host plans the walk
// (elementwise_plan.h): dimensions in the output's memory order, merged where
// every operand is contiguous across them. Then, fastest first:
//  - vectors: when the innermost dimension is dense (or broadcast) in every
//    operand and the addresses are aligned, each thread moves 16 bytes of the
//    narrowest operand per access and computes offsets once per vector; a
//    dense tensor is the one-dimensional case, with a scalar tail;
//  - elements with 32-bit offsets and multiply-shift division;
//  - elements with 64-bit offsets, for spaces past 2^31 elements or bytes.
// Functors take and return device element types (see device_types.cuh).
// Kernels pick types with the HEARTH_CUDA_DISPATCH_* macros (device_types.cuh),
// whose body runs inside a generic lambda, where nvcc forbids extended
// __device__ lambdas: pass functor structs.
#pragma once

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "hearth/backends/cuda/context.h"
#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/device_types.cuh"
#include "hearth/backends/cuda/elementwise_plan.h"
#include "hearth/core/tensor.h"

namespace hearth::cuda {

inline constexpr int kThreads = 256;

// The 64-bit calculator: sizes outermost first, byte strides.
template <int N>
struct OffsetCalc {
  int ndim;
  int64_t sizes[kMaxDims];       // innermost last
  int64_t strides[kMaxDims][N];  // bytes
  __device__ void get(int64_t linear, int64_t (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
    if (ndim == 1) {  // a dense space past 2^31 elements: no division at all
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] = linear * strides[0][k];
      return;
    }
    for (int d = ndim - 1; d >= 0; --d) {
      int64_t i = linear % sizes[d];
      linear /= sizes[d];
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += i * strides[d][k];
    }
  }
};

template <int N>
OffsetCalc<N> make_offset_calc(const IterDims<N>& dims) {
  HEARTH_CHECK(dims.ndim() <= kMaxDims, NotImplementedError, "[cuda] elementwise ops support at most ", kMaxDims,
               " non-mergeable dimensions, got ", dims.ndim());
  OffsetCalc<N> oc{};
  oc.ndim = dims.ndim();
  for (int d = 0; d < dims.ndim(); ++d) {
    const int o = dims.ndim() - 1 - d;  // IterDims is innermost first
    oc.sizes[o] = dims.sizes[d];
    for (int k = 0; k < N; ++k) oc.strides[o][k] = dims.strides[d][k];
  }
  return oc;
}

// t's byte strides viewed at `shape` (trailing dims aligned), 0 where broadcast.
inline std::vector<int64_t> broadcast_byte_strides(const Tensor& t, const Shape& shape) {
  std::vector<int64_t> st(shape.size(), 0);
  const int64_t lead = static_cast<int64_t>(shape.size()) - t.dim();
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t td = static_cast<int64_t>(d) - lead;
    if (td >= 0 && t.shape()[td] != 1) st[d] = t.strides()[td] * static_cast<int64_t>(t.element_size());
  }
  return st;
}

template <int N>
struct Ptrs {
  char* p[N];
};

template <int N>
struct TailStrides {
  int32_t s[N];  // bytes per element
};

// `V` elements of T in registers, moved in accesses of at most 16 bytes.
template <typename T, int C>
struct alignas(sizeof(T) * C) Aligned {
  T v[C];
};

template <int V, typename T>
__device__ __forceinline__ void load_elems(const char* p, bool broadcast, T (&dst)[V]) {
  if (V == 1 || broadcast) {
    const T x = *reinterpret_cast<const T*>(p);
#pragma unroll
    for (int j = 0; j < V; ++j) dst[j] = x;
    return;
  }
  constexpr int C = access_bytes(sizeof(T), V) / static_cast<int>(sizeof(T));
  const auto* src = reinterpret_cast<const Aligned<T, C>*>(p);
#pragma unroll
  for (int c = 0; c < V / C; ++c) {
    const Aligned<T, C> chunk = src[c];
#pragma unroll
    for (int j = 0; j < C; ++j) dst[c * C + j] = chunk.v[j];
  }
}

template <int V, typename T>
__device__ __forceinline__ void store_elems(char* p, const T (&src)[V]) {
  constexpr int C = access_bytes(sizeof(T), V) / static_cast<int>(sizeof(T));
  auto* dst = reinterpret_cast<Aligned<T, C>*>(p);
#pragma unroll
  for (int c = 0; c < V / C; ++c) {
    Aligned<T, C> chunk;
#pragma unroll
    for (int j = 0; j < C; ++j) chunk.v[j] = src[c * C + j];
    dst[c] = chunk;
  }
}

// One register array per input, told apart by index so that inputs of one type
// still get arrays of their own.
template <int V, size_t I, typename T>
struct InputRegs {
  T v[V];
};
template <int V, typename Seq, typename... Ts>
struct InputPack;
template <int V, size_t... I, typename... Ts>
struct InputPack<V, std::index_sequence<I...>, Ts...> : InputRegs<V, I, Ts>... {};
template <size_t I, int V, typename T>
__device__ __forceinline__ T (&input_regs(InputRegs<V, I, T>& r))[V] {
  return r.v;
}

// Binds a functor to its operand types; kernels below take one template pack-free
// type, which nvcc requires of __global__ templates.
template <typename Out, typename F, typename... Ins>
struct ElementwiseOp {
  F f;
  // V elements at byte offsets `off` (operand 0 the output); inputs whose bit is
  // set in `broadcast` hold one element for all V.
  template <int V, typename Off, size_t... I>
  __device__ __forceinline__ void apply(char* const* p, const Off* off, uint32_t broadcast,
                                        std::index_sequence<I...>) const {
    InputPack<V, std::index_sequence<I...>, Ins...> in;
    (load_elems<V>(p[I + 1] + off[I + 1], ((broadcast >> (I + 1)) & 1u) != 0, input_regs<I>(in)), ...);
    (void)broadcast;
    Out res[V];
#pragma unroll
    for (int j = 0; j < V; ++j) res[j] = f(input_regs<I>(in)[j]...);
    store_elems<V>(p[0] + off[0], res);
  }
};

// V elements per thread and step (V = 1: one element); a one-dimensional space
// leaves `tail` (< V) elements, done one each by the first threads of block 0.
template <int V, int N, typename Op>
__global__ void elementwise_kernel(uint32_t count, OffsetCalc32<N> oc, Ptrs<N> ptrs, uint32_t broadcast,
                                   uint32_t tail, TailStrides<N> tail_strides, Op op) {
  const uint32_t step = gridDim.x * blockDim.x;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step) {
    int32_t off[N];
    oc.get(i, off);
    op.template apply<V>(ptrs.p, off, broadcast, std::make_index_sequence<N - 1>{});
  }
  if constexpr (V > 1) {
    if (blockIdx.x == 0 && threadIdx.x < tail) {
      const int32_t e = static_cast<int32_t>(count * V + threadIdx.x);
      int32_t off[N];
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] = e * tail_strides.s[k];
      op.template apply<1>(ptrs.p, off, 0u, std::make_index_sequence<N - 1>{});
    }
  }
}

template <int N, typename Op>
__global__ void elementwise_kernel64(int64_t n, OffsetCalc<N> oc, Ptrs<N> ptrs, Op op) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[N];
    oc.get(i, off);
    op.template apply<1>(ptrs.p, off, 0u, std::make_index_sequence<N - 1>{});
  }
}

inline unsigned grid_for(int64_t n, int64_t per_block, int device) {
  int64_t blocks = (n + per_block - 1) / per_block;
  int64_t cap = static_cast<int64_t>(context(device).props.multiProcessorCount) * 32;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, cap)));
}

template <int V, int N, typename Op>
void launch_elementwise(const IterDims<N>& dims, uint32_t broadcast, int64_t tail,
                        const std::array<int64_t, N>& tail_strides, const Ptrs<N>& ptrs, const Op& op, int device) {
  const int64_t count = dims.numel();
  TailStrides<N> ts{};
  for (int k = 0; k < N; ++k) ts.s[k] = static_cast<int32_t>(tail_strides[k]);
  elementwise_kernel<V, N><<<grid_for(std::max<int64_t>(count, 1), kThreads, device), kThreads, 0, stream(device)>>>(
      static_cast<uint32_t>(count), make_offset_calc32(dims), ptrs, broadcast, static_cast<uint32_t>(tail), ts, op);
}

template <typename T, typename... Ts>
constexpr int min_size() {
  if constexpr (sizeof...(Ts) == 0) return static_cast<int>(sizeof(T));
  else return std::min(static_cast<int>(sizeof(T)), min_size<Ts...>());
}

// out = f(ins...) elementwise; `ins` broadcast to out's shape. Out and Ins are
// device element types.
template <typename Out, typename... Ins, typename F>
void gpu_elementwise(const Tensor& out, std::array<const Tensor*, sizeof...(Ins)> ins, F f) {
  constexpr int N = 1 + sizeof...(Ins);
  if (out.numel() == 0) return;
  const int device = out.device().index;
  std::array<const Tensor*, N> all;
  all[0] = &out;
  if constexpr (sizeof...(Ins) > 0)
    for (size_t k = 0; k < sizeof...(Ins); ++k) all[k + 1] = ins[k];
  Ptrs<N> ptrs;
  std::array<std::vector<int64_t>, N> strides;
  std::array<uintptr_t, N> address;
  for (int k = 0; k < N; ++k) {
    ptrs.p[k] = static_cast<char*>(all[k]->data_ptr());
    address[k] = reinterpret_cast<uintptr_t>(ptrs.p[k]);
    strides[k] = broadcast_byte_strides(*all[k], out.shape());
  }
  const IterDims<N> dims = collapse_dims<N>(out.shape(), strides);
  const ElementwiseOp<Out, F, Ins...> op{f};
  if (fits_int32(dims)) {
    constexpr int kVec = vector_width(min_size<Out, Ins...>());
    const std::array<int, N> elem_size = {static_cast<int>(sizeof(Out)), static_cast<int>(sizeof(Ins))...};
    VectorPlan<N> plan;
    if (plan_vectors<N>(dims, kVec, elem_size, address, plan))
      launch_elementwise<kVec, N>(plan.dims, plan.broadcast_mask, plan.tail, plan.tail_strides, ptrs, op, device);
    else
      launch_elementwise<1, N>(dims, 0u, 0, {}, ptrs, op, device);
  } else {
    const int64_t n = dims.numel();
    elementwise_kernel64<N><<<grid_for(n, kThreads, device), kThreads, 0, stream(device)>>>(
        n, make_offset_calc<N>(dims), ptrs, op);
  }
  HEARTH_CUDA_CHECK_LAUNCH();
}

}  // namespace hearth::cuda
