// Small pieces the CPU elementwise kernels share: visiting only the dtypes a
// kernel registered for (so nothing is instantiated for types it never sees),
// the loop of the binary arithmetic kernels, and integer arithmetic that wraps
// instead of overflowing (signed overflow is undefined behaviour, and the
// sanitizer build would flag it).
#pragma once

#include <cmath>
#include <type_traits>
#include <utility>

#include "hearth/backends/cpu/strided_loop.h"
#include "hearth/core/dtype.h"
#include "hearth/core/dtype_visit.h"
#include "hearth/dispatch/op_call.h"

namespace hearth::cpu {

// The core visitor (hearth/core/dtype_visit.h) over the floating dtypes.
template <typename F>
decltype(auto) visit_floating(DType t, F&& f) {
  return visit_dtype_in<DTypeSet::floating().bits()>(t, std::forward<F>(f), [](DType bad) {
    HEARTH_THROW(TypeError, "[cpu] kernel called with non-floating dtype ", dtype_name(bad));
  });
}

// Every dtype but bool.
template <typename F>
decltype(auto) visit_numeric(DType t, F&& f) {
  return visit_dtype_in<(DTypeSet::floating() | DTypeSet::integral()).bits()>(t, std::forward<F>(f), [](DType bad) {
    if (bad == DType::bool_) HEARTH_THROW(TypeError, "[cpu] kernel called with dtype bool");
    HEARTH_THROW(TypeError, "[cpu] kernel called with non-floating dtype ", dtype_name(bad));
  });
}

// out = fn(a, b) elementwise, fn made per dtype by make_fn(TypeTag<C>) and
// applied in compute_t<T> (float for the half types).
template <typename F>
void run_binary(OpCall& call, F&& make_fn) {
  const Tensor& out = call.out(0);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    auto fn = make_fn(TypeTag<C>{});
    binary_loop<T, T, T>(out, call.in(0), call.in(1),
                         [&](T a, T b) { return static_cast<T>(fn(static_cast<C>(a), static_cast<C>(b))); });
  });
}

// out = partial + own for the floating dtypes, rounded as the add op rounds:
// how a kernel with a partial-sum operand (conv2d_backward_input, bmm) adds
// the product it computed on its own, so its result is the plain path's
// add(partial, product) bit for bit.
inline void add_partial_sum(const Tensor& out, const Tensor& partial, const Tensor& own) {
  visit_floating(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    binary_loop<T, T, T>(out, partial, own,
                         [](T a, T b) { return static_cast<T>(static_cast<C>(a) + static_cast<C>(b)); });
  });
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
