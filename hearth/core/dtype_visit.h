// The one switch from a DType to its C++ type, for every layer and both
// compilers (.cpp and .cu):
//
//   visit_dtype_in<kSet, Map>(t, f, unsupported)
//
// calls f(TypeTag<Map<T>>{}) with T the host type of `t` (float, double,
// BFloat16, Half, int64_t, int32_t, uint8_t, bool) when `t` is in kSet (a
// DTypeSet's bits()), and unsupported(t), which must throw, otherwise. f is
// instantiated only for the dtypes of kSet, so a kernel compiles only for the
// types it registered. Map lets a backend see its own types: the CUDA backend
// maps BFloat16/Half to __nv_bfloat16/__half (hearth/backends/cuda/device_types.cuh).
// visit_dtype(t, f) visits every dtype.
#pragma once

#include <cstdint>
#include <utility>

#include "hearth/core/dtype.h"

namespace hearth {

template <typename T>
using same_type = T;

template <uint32_t kSet, template <typename> class Map = same_type, typename F, typename Unsupported>
decltype(auto) visit_dtype_in(DType t, F&& f, Unsupported&& unsupported) {
  switch (t) {
#define HEARTH_DTYPE_CASE_(DT, T)                                                                      \
  case DType::DT:                                                                                      \
    if constexpr (((kSet >> static_cast<unsigned>(DType::DT)) & 1u) != 0) return f(TypeTag<Map<T>>{}); \
    break;
    HEARTH_DTYPE_CASE_(float32, float)
    HEARTH_DTYPE_CASE_(float64, double)
    HEARTH_DTYPE_CASE_(bfloat16, BFloat16)
    HEARTH_DTYPE_CASE_(float16, Half)
    HEARTH_DTYPE_CASE_(int64, int64_t)
    HEARTH_DTYPE_CASE_(int32, int32_t)
    HEARTH_DTYPE_CASE_(uint8, uint8_t)
    HEARTH_DTYPE_CASE_(bool_, bool)
#undef HEARTH_DTYPE_CASE_
  }
  unsupported(t);
  __builtin_unreachable();
}

// Every dtype; a code outside the enum throws.
template <typename F>
decltype(auto) visit_dtype(DType t, F&& f) {
  return visit_dtype_in<DTypeSet::all().bits()>(t, std::forward<F>(f), [](DType bad) {
    HEARTH_THROW(TypeError, "[dtype] unknown dtype code ", static_cast<int>(bad));
  });
}

}  // namespace hearth
