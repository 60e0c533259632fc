// The elementwise engine of the CUDA backend: any number of operands with one
// common (broadcast) shape and arbitrary strides. Dense operands take a flat,
// unrolled path; others an offset calculator over at most kMaxDims merged dims.
// Functors take and return device element types (see device_types.cuh). nvcc
// forbids extended __device__ lambdas inside generic lambdas, so kernels pick
// types with the HEARTH_CUDA_DISPATCH_* macros (device_types.cuh), inside which
// `[=] __device__ (...)` lambdas are fine, or pass functor structs.
#pragma once

#include <array>
#include <cstdint>
#include <tuple>

#include "hearth/backends/cuda/context.h"
#include "hearth/backends/cuda/cuda_check.h"
#include "hearth/backends/cuda/device_types.cuh"
#include "hearth/core/tensor.h"

namespace hearth::cuda {

inline constexpr int kMaxDims = 12;
inline constexpr int kThreads = 256;
inline constexpr int kUnroll = 4;

template <int N>
struct OffsetCalc {
  int ndim;
  int64_t sizes[kMaxDims];       // innermost last
  int64_t strides[kMaxDims][N];  // bytes
  __device__ void get(int64_t linear, int64_t (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      int64_t i = linear % sizes[d];
      linear /= sizes[d];
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += i * strides[d][k];
    }
  }
};

// Builds the calculator for `tensors` viewed at `shape`, merging dims that are
// jointly contiguous. Returns false if more than kMaxDims dims remain.
template <int N>
OffsetCalc<N> make_offset_calc(const std::array<const Tensor*, N>& tensors, const Shape& shape) {
  OffsetCalc<N> oc{};
  int64_t sizes[64];
  int64_t strides[64][N];
  int nd = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    int64_t st[N];
    for (int k = 0; k < N; ++k) {
      const Tensor& t = *tensors[k];
      int64_t lead = static_cast<int64_t>(shape.size()) - t.dim();
      int64_t td = static_cast<int64_t>(d) - lead;
      st[k] = (td < 0 || t.shape()[td] == 1) ? 0 : t.strides()[td] * static_cast<int64_t>(t.element_size());
    }
    bool merge = nd > 0;
    for (int k = 0; k < N && merge; ++k) merge = strides[nd - 1][k] == st[k] * shape[d];
    if (merge) {
      sizes[nd - 1] *= shape[d];
      for (int k = 0; k < N; ++k) strides[nd - 1][k] = st[k];
    } else {
      sizes[nd] = shape[d];
      for (int k = 0; k < N; ++k) strides[nd][k] = st[k];
      ++nd;
    }
  }
  HEARTH_CHECK(nd <= kMaxDims, NotImplementedError, "[cuda] elementwise ops support at most ", kMaxDims,
               " non-mergeable dimensions, got ", nd);
  oc.ndim = nd;
  for (int d = 0; d < nd; ++d) {
    oc.sizes[d] = sizes[d];
    for (int k = 0; k < N; ++k) oc.strides[d][k] = strides[d][k];
  }
  return oc;
}

template <int N>
struct Ptrs {
  char* p[N];
};

// Binds a functor to its operand types; kernels below take one template pack-free
// type, which nvcc requires of __global__ templates.
template <typename Out, typename F, typename... Ins>
struct ElementwiseOp {
  F f;
  template <size_t... I>
  __device__ void dense(char* const* p, int64_t i, std::index_sequence<I...>) const {
    reinterpret_cast<Out*>(p[0])[i] = f(reinterpret_cast<const Ins*>(p[I + 1])[i]...);
  }
  template <size_t... I>
  __device__ void strided(char* const* p, const int64_t* off, std::index_sequence<I...>) const {
    *reinterpret_cast<Out*>(p[0] + off[0]) = f(*reinterpret_cast<const Ins*>(p[I + 1] + off[I + 1])...);
  }
};

template <int N, typename Op>
__global__ void elementwise_dense_kernel(int64_t n, Ptrs<N> ptrs, Op op) {
  int64_t base = (static_cast<int64_t>(blockIdx.x) * blockDim.x * kUnroll) + threadIdx.x;
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x * kUnroll;
  for (; base < n; base += step) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int64_t i = base + u * blockDim.x;
      if (i < n) op.dense(ptrs.p, i, std::make_index_sequence<N - 1>{});
    }
  }
}

template <int N, typename Op>
__global__ void elementwise_strided_kernel(int64_t n, OffsetCalc<N> oc, Ptrs<N> ptrs, Op op) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t off[N];
    oc.get(i, off);
    op.strided(ptrs.p, off, std::make_index_sequence<N - 1>{});
  }
}

inline unsigned grid_for(int64_t n, int64_t per_block, int device) {
  int64_t blocks = (n + per_block - 1) / per_block;
  int64_t cap = static_cast<int64_t>(context(device).props.multiProcessorCount) * 32;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, cap)));
}

// out = f(ins...) elementwise; `ins` broadcast to out's shape. Out and Ins are
// device element types.
template <typename Out, typename... Ins, typename F>
void gpu_elementwise(const Tensor& out, std::array<const Tensor*, sizeof...(Ins)> ins, F f) {
  constexpr int N = 1 + sizeof...(Ins);
  const int64_t n = out.numel();
  if (n == 0) return;
  const int device = out.device().index;
  cudaStream_t s = stream(device);
  Ptrs<N> ptrs;
  ptrs.p[0] = static_cast<char*>(out.data_ptr());
  // Flat indexing holds when every operand is dense in one common layout:
  // all contiguous, or all channels_last with the output's very strides.
  const bool out_nhwc = !out.is_contiguous() && out.is_contiguous(MemoryFormat::channels_last);
  bool dense = out.is_contiguous() || out_nhwc;
  if constexpr (sizeof...(Ins) > 0) {
    for (size_t k = 0; k < sizeof...(Ins); ++k) {
      ptrs.p[k + 1] = static_cast<char*>(ins[k]->data_ptr());
      const bool same_layout = out_nhwc ? ins[k]->strides() == out.strides() : ins[k]->is_contiguous();
      dense = dense && ins[k]->shape() == out.shape() && same_layout;
    }
  }
  ElementwiseOp<Out, F, Ins...> op{f};
  if (dense) {
    elementwise_dense_kernel<N><<<grid_for(n, kThreads * kUnroll, device), kThreads, 0, s>>>(n, ptrs, op);
  } else {
    std::array<const Tensor*, N> all;
    all[0] = &out;
    if constexpr (sizeof...(Ins) > 0)
      for (size_t k = 0; k < sizeof...(Ins); ++k) all[k + 1] = ins[k];
    OffsetCalc<N> oc = make_offset_calc<N>(all, out.shape());
    elementwise_strided_kernel<N><<<grid_for(n, kThreads, device), kThreads, 0, s>>>(n, oc, ptrs, op);
  }
  HEARTH_CUDA_CHECK_LAUNCH();
}

}  // namespace hearth::cuda
