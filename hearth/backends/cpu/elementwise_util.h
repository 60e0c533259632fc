// Small pieces the CPU elementwise kernels share: visiting only the dtypes a
// kernel registered for (so nothing is instantiated for types it never sees),
// and integer arithmetic that wraps instead of overflowing (signed overflow is
// undefined behaviour, and the sanitizer build would flag it).
#pragma once

#include <cmath>
#include <type_traits>

#include "hearth/core/dtype.h"

namespace hearth::cpu {

template <typename F>
decltype(auto) visit_floating(DType t, F&& f) {
  switch (t) {
    case DType::float32:
      return f(TypeTag<float>{});
    case DType::float64:
      return f(TypeTag<double>{});
    case DType::bfloat16:
      return f(TypeTag<BFloat16>{});
    case DType::float16:
      return f(TypeTag<Half>{});
    default:
      break;
  }
  HEARTH_THROW(TypeError, "[cpu] kernel called with non-floating dtype ", dtype_name(t));
}

// Every dtype but bool.
template <typename F>
decltype(auto) visit_numeric(DType t, F&& f) {
  switch (t) {
    case DType::int64:
      return f(TypeTag<int64_t>{});
    case DType::int32:
      return f(TypeTag<int32_t>{});
    case DType::uint8:
      return f(TypeTag<uint8_t>{});
    case DType::bool_:
      break;
    default:
      return visit_floating(t, std::forward<F>(f));
  }
  HEARTH_THROW(TypeError, "[cpu] kernel called with dtype bool");
}

template <typename T>
T wrapping_neg(T x) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(U{0} - static_cast<U>(x)));
}

template <typename T>
T wrapping_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  // uint8 operands promote to int; their product always fits.
  return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
}

template <typename C>
bool is_nan(C x) {
  if constexpr (std::is_floating_point_v<C>)
    return std::isnan(x);
  else
    return false;
}

}  // namespace hearth::cpu
