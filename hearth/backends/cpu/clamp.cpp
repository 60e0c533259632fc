// clamp on the CPU, in compute_t<T> (float for the half types).
#include "hearth/dispatch/schemas/clamp.h"

#include "hearth/backends/cpu/elementwise_util.h"
#include "hearth/backends/cpu/level_kernel_registrar.h"
#include "hearth/backends/cpu/strided_loop.h"

namespace hearth::cpu {
namespace {

void clamp_kernel(OpCall& call) {
  const ClampAttrs& at = call.attrs<ClampAttrs>();
  const Tensor& out = call.out(0);
  visit_numeric(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const bool has_lo = at.has_min, has_hi = at.has_max;
    const C lo = has_lo ? at.min.to<C>() : C(0);
    const C hi = has_hi ? at.max.to<C>() : C(0);
    // NaN passes through (both comparisons are false); lo > hi gives hi, as in PyTorch.
    unary_loop<T, T>(out, call.in(0), [=](T v) {
      C x = static_cast<C>(v);
      if (has_lo && x < lo) x = lo;
      if (has_hi && x > hi) x = hi;
      return static_cast<T>(x);
    });
  });
}

HEARTH_REGISTER_CPU_KERNEL(clamp, clamp_kernel, DTypeSet::floating() | DTypeSet::integral());

}  // namespace
}  // namespace hearth::cpu
