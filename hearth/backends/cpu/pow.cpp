// pow on the CPU. Floats use std::pow in the compute type; integers square and
// multiply with wrap-around, and negative exponents follow integer division
// (1 stays 1, -1 alternates, anything else truncates to 0).
#include <cmath>

#include "hearth/backends/cpu/elementwise_util.h"
#include "hearth/backends/cpu/strided_loop.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cpu {
namespace {

template <typename T>
T integer_pow(T base, T exponent) {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent & 1) ? T(-1) : T(1);
      return 0;
    }
  }
  T result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = wrapping_mul(result, base);
    base = wrapping_mul(base, base);
    exponent = static_cast<T>(exponent >> 1);
  }
  return result;
}

void pow_kernel(OpCall& call) {
  const Tensor& out = call.out(0);
  visit_numeric(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    binary_loop<T, T, T>(out, call.in(0), call.in(1), [](T a, T b) {
      if constexpr (std::is_integral_v<T>)
        return integer_pow(a, b);
      else
        return static_cast<T>(std::pow(static_cast<C>(a), static_cast<C>(b)));
    });
  });
}

HEARTH_REGISTER_KERNEL(pow, kCpu, pow_kernel, DTypeSet::floating() | DTypeSet::integral());

}  // namespace
}  // namespace hearth::cpu
