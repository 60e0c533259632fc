// hearth's element types as CUDA sees them, and the float/double/integer types
// arithmetic happens in. BFloat16/Half share layout with __nv_bfloat16/__half;
// conversions round to nearest even, as the CPU backend does.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "hearth/core/dtype.h"

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

}  // namespace hearth::cuda

// Type dispatch for .cu files: pastes the lambda into a case where `scalar_t` is
// the device element type (float, double, __nv_bfloat16, __half, int64_t, ...),
// so __device__ lambdas inside it are legal for nvcc. Usage:
//   HEARTH_CUDA_DISPATCH_ALL(t.dtype(), "op", [&] { gpu_elementwise<scalar_t>(...); });
#define HEARTH_CUDA_CASE(DT, TYPE, ...) \
  case DT: {                            \
    using scalar_t = TYPE;              \
    __VA_ARGS__();                      \
    break;                              \
  }
#define HEARTH_CUDA_FLOATING_CASES(...)                                   \
  HEARTH_CUDA_CASE(::hearth::DType::float32, float, __VA_ARGS__)          \
  HEARTH_CUDA_CASE(::hearth::DType::float64, double, __VA_ARGS__)         \
  HEARTH_CUDA_CASE(::hearth::DType::bfloat16, __nv_bfloat16, __VA_ARGS__) \
  HEARTH_CUDA_CASE(::hearth::DType::float16, __half, __VA_ARGS__)
#define HEARTH_CUDA_INTEGRAL_CASES(...)                           \
  HEARTH_CUDA_CASE(::hearth::DType::int64, int64_t, __VA_ARGS__)  \
  HEARTH_CUDA_CASE(::hearth::DType::int32, int32_t, __VA_ARGS__)  \
  HEARTH_CUDA_CASE(::hearth::DType::uint8, uint8_t, __VA_ARGS__)
#define HEARTH_CUDA_UNSUPPORTED(OPNAME, DTYPE)                                                          \
  default:                                                                                              \
    HEARTH_THROW(::hearth::NotImplementedError, "[", OPNAME, "] has no CUDA kernel for dtype ", \
                 ::hearth::dtype_name(DTYPE));
#define HEARTH_CUDA_DISPATCH_FLOATING(DTYPE, OPNAME, ...) \
  switch (DTYPE) {                                        \
    HEARTH_CUDA_FLOATING_CASES(__VA_ARGS__)               \
    HEARTH_CUDA_UNSUPPORTED(OPNAME, DTYPE)                \
  }
#define HEARTH_CUDA_DISPATCH_ALL(DTYPE, OPNAME, ...)             \
  switch (DTYPE) {                                               \
    HEARTH_CUDA_FLOATING_CASES(__VA_ARGS__)                      \
    HEARTH_CUDA_INTEGRAL_CASES(__VA_ARGS__)                      \
    HEARTH_CUDA_CASE(::hearth::DType::bool_, bool, __VA_ARGS__)  \
    HEARTH_CUDA_UNSUPPORTED(OPNAME, DTYPE)                       \
  }
#define HEARTH_CUDA_DISPATCH_NUMERIC(DTYPE, OPNAME, ...) \
  switch (DTYPE) {                                       \
    HEARTH_CUDA_FLOATING_CASES(__VA_ARGS__)              \
    HEARTH_CUDA_INTEGRAL_CASES(__VA_ARGS__)              \
    HEARTH_CUDA_UNSUPPORTED(OPNAME, DTYPE)               \
  }
