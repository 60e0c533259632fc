// hearth's element types as CUDA sees them, and the float/double/integer types
// arithmetic happens in. BFloat16/Half share layout with __nv_bfloat16/__half;
// conversions round to nearest even, as the CPU backend does.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "hearth/core/dtype.h"
#include "hearth/core/dtype_visit.h"

namespace hearth::cuda {

template <typename T>
struct DevTypeOf {
  using type = T;
};
template <>
struct DevTypeOf<BFloat16> {
  using type = __nv_bfloat16;
};
template <>
struct DevTypeOf<Half> {
  using type = __half;
};
template <typename T>
using dev_t = typename DevTypeOf<T>::type;

// Arithmetic type of a device element type.
template <typename D>
struct AccOf {
  using type = D;
};
template <>
struct AccOf<__nv_bfloat16> {
  using type = float;
};
template <>
struct AccOf<__half> {
  using type = float;
};
template <typename D>
using acc_t = typename AccOf<D>::type;

template <typename D>
__host__ __device__ inline acc_t<D> to_acc(D v) {
  if constexpr (std::is_same_v<D, __nv_bfloat16>) return __bfloat162float(v);
  else if constexpr (std::is_same_v<D, __half>) return __half2float(v);
  else return v;
}

template <typename D, typename A>
__host__ __device__ inline D from_acc(A v) {
  if constexpr (std::is_same_v<D, __nv_bfloat16>) return __float2bfloat16_rn(static_cast<float>(v));
  else if constexpr (std::is_same_v<D, __half>) return __float2half_rn(static_cast<float>(v));
  else if constexpr (std::is_same_v<D, bool>) return v != A(0);
  else return static_cast<D>(v);
}

// What a dispatch macro below does with a dtype outside its set.
[[noreturn]] inline void throw_no_cuda_kernel(const char* op, DType t) {
  HEARTH_THROW(NotImplementedError, "[", op, "] has no CUDA kernel for dtype ", dtype_name(t));
}

}  // namespace hearth::cuda

// Type dispatch for .cu files: the core visitor (hearth/core/dtype_visit.h)
// with the device types, `scalar_t` naming the device element type (float,
// double, __nv_bfloat16, __half, int64_t, ...) inside the body. Usage:
//   HEARTH_CUDA_DISPATCH_ALL(t.dtype(), "op", [&] { gpu_elementwise<scalar_t>(...); });
// A dtype outside the set throws NotImplementedError naming the op. The body
// runs inside a generic lambda: launch kernels with functor structs there, not
// with __device__ lambdas (nvcc refuses those inside a generic lambda).
#define HEARTH_CUDA_DISPATCH_IN(SET, DTYPE, OPNAME, ...)             \
  ::hearth::visit_dtype_in<(SET).bits(), ::hearth::cuda::dev_t>(     \
      DTYPE,                                                         \
      [&](auto hearth_dtype_tag_) {                                  \
        using scalar_t = typename decltype(hearth_dtype_tag_)::type; \
        (__VA_ARGS__)();                                             \
      },                                                             \
      [&](::hearth::DType hearth_dtype_) { ::hearth::cuda::throw_no_cuda_kernel(OPNAME, hearth_dtype_); })
#define HEARTH_CUDA_DISPATCH_FLOATING(DTYPE, OPNAME, ...) \
  HEARTH_CUDA_DISPATCH_IN(::hearth::DTypeSet::floating(), DTYPE, OPNAME, __VA_ARGS__)
#define HEARTH_CUDA_DISPATCH_ALL(DTYPE, OPNAME, ...) \
  HEARTH_CUDA_DISPATCH_IN(::hearth::DTypeSet::all(), DTYPE, OPNAME, __VA_ARGS__)
#define HEARTH_CUDA_DISPATCH_NUMERIC(DTYPE, OPNAME, ...) \
  HEARTH_CUDA_DISPATCH_IN((::hearth::DTypeSet::floating() | ::hearth::DTypeSet::integral()), DTYPE, OPNAME, __VA_ARGS__)
