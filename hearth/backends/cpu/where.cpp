// Selection on the CPU: where (cond ? a : b).
#include "hearth/backends/cpu/elementwise_util.h"
#include "hearth/backends/cpu/level_kernel_registrar.h"
#include "hearth/backends/cpu/strided_loop.h"
#include "hearth/core/dtype_visit.h"

namespace hearth::cpu {
namespace {

void where_kernel(OpCall& call) {
  const Tensor& out = call.out(0);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ternary_loop<T, T, T, bool>(out, call.in(0), call.in(1), call.in(2), [](T a, T b, bool c) { return c ? a : b; });
  });
}

HEARTH_REGISTER_CPU_KERNEL(where, where_kernel, DTypeSet::all());

}  // namespace
}  // namespace hearth::cpu
