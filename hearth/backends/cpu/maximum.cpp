// maximum, minimum on the CPU. Arithmetic in float for the half types.
#include "hearth/backends/cpu/elementwise_util.h"
#include "hearth/backends/cpu/strided_loop.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cpu {
namespace {

// NaN in either operand wins, as in PyTorch (std::max would depend on the order).
void maximum_kernel(OpCall& call) {
  run_binary(call, [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C a, C b) { return is_nan(a) ? a : (is_nan(b) ? b : (a < b ? b : a)); };
  });
}

void minimum_kernel(OpCall& call) {
  run_binary(call, [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C a, C b) { return is_nan(a) ? a : (is_nan(b) ? b : (b < a ? b : a)); };
  });
}

HEARTH_REGISTER_KERNEL(maximum, kCpu, maximum_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(minimum, kCpu, minimum_kernel, DTypeSet::all());

}  // namespace
}  // namespace hearth::cpu
