// What the CUDA row reductions share (reduce_sum, reduce_minmax, reduce_var,
// reduce_norm) besides the engine of row_reduce.cuh: the types extremes
// compare in, NaN-aware picks, device math by accumulation type, warp
// shuffles, and the [outer, inner] rows of a call.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <cuda/std/limits>

#include "hearth/backends/cuda/context.h"
#include "hearth/backends/cuda/device_types.cuh"
#include "hearth/dispatch/op_call.h"

namespace hearth::cuda::rowred {

// Type extremes are compared in: float for the half types, int for the narrow
// integers (warp shuffles need 32 bits at least), the element type otherwise.
template <typename D>
struct RedOf {
  using type = acc_t<D>;
};
template <>
struct RedOf<bool> {
  using type = int;
};
template <>
struct RedOf<uint8_t> {
  using type = int;
};
template <typename D>
using red_t = typename RedOf<D>::type;

template <typename A>
__device__ __forceinline__ bool dev_isnan(A v) {
  if constexpr (std::is_floating_point_v<A>)
    return v != v;
  else
    return false;
}
template <typename A>
__device__ __forceinline__ A dev_abs(A v) {
  if constexpr (std::is_same_v<A, double>)
    return ::fabs(v);
  else
    return ::fabsf(v);
}
template <typename A>
__device__ __forceinline__ A dev_sqrt(A v) {
  if constexpr (std::is_same_v<A, double>)
    return ::sqrt(v);
  else
    return ::sqrtf(v);
}
template <typename A>
__device__ __forceinline__ A dev_pow(A v, A p) {
  if constexpr (std::is_same_v<A, double>)
    return ::pow(v, p);
  else
    return ::powf(v, p);
}
template <typename A>
__device__ __forceinline__ A shfl(A v, int mask) {
  return __shfl_xor_sync(0xffffffffu, v, mask);
}

// The worst value for a max (kMax) or a min, so any element replaces it.
template <typename A, bool kMax>
__device__ __forceinline__ A worst() {
  using L = ::cuda::std::numeric_limits<A>;
  if constexpr (std::is_floating_point_v<A>)
    return kMax ? -L::infinity() : L::infinity();
  else
    return kMax ? L::lowest() : L::max();
}

// The better of two values; NaN wins, as on the CPU.
template <bool kMax, typename A>
__device__ __forceinline__ A pick(A a, A b) {
  if (dev_isnan(a)) return a;
  if (dev_isnan(b)) return b;
  return (kMax ? b > a : b < a) ? b : a;
}

struct RowsOf {
  const Tensor& x;
  int64_t outer, inner;
};

inline RowsOf rows_of(OpCall& call) {
  const Tensor& x = call.in(0);
  activate(x.device().index);
  return {x, x.shape()[0], x.shape()[1]};
}

}  // namespace hearth::cuda::rowred
