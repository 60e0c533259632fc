// Comparisons and logical ops on the CPU: two same-dtype inputs, a bool output.
#include <functional>

#include "hearth/backends/cpu/strided_loop.h"
#include "hearth/core/dtype_visit.h"
#include "hearth/dispatch/registry.h"

namespace hearth::cpu {
namespace {

// out (bool) = pred(a, b) in a's compute type.
template <typename Pred>
void compare(OpCall& call, Pred pred) {
  const Tensor& a = call.in(0);
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    binary_loop<bool, T, T>(call.out(0), a, call.in(1),
                            [&](T x, T y) { return pred(static_cast<C>(x), static_cast<C>(y)); });
  });
}

// Operands are truth values: nonzero (NaN included) is true.
template <typename Pred>
void logical(OpCall& call, Pred pred) {
  compare(call, [&](auto x, auto y) {
    using C = decltype(x);
    return pred(x != C(0), y != C(0));
  });
}

void eq_kernel(OpCall& call) { compare(call, std::equal_to<>{}); }
void ne_kernel(OpCall& call) { compare(call, std::not_equal_to<>{}); }
void lt_kernel(OpCall& call) { compare(call, std::less<>{}); }
void le_kernel(OpCall& call) { compare(call, std::less_equal<>{}); }
void gt_kernel(OpCall& call) { compare(call, std::greater<>{}); }
void ge_kernel(OpCall& call) { compare(call, std::greater_equal<>{}); }
void logical_and_kernel(OpCall& call) {
  logical(call, [](bool x, bool y) { return x && y; });
}
void logical_or_kernel(OpCall& call) {
  logical(call, [](bool x, bool y) { return x || y; });
}
void logical_xor_kernel(OpCall& call) {
  logical(call, [](bool x, bool y) { return x != y; });
}

HEARTH_REGISTER_KERNEL(eq, kCpu, eq_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(ne, kCpu, ne_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(lt, kCpu, lt_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(le, kCpu, le_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(gt, kCpu, gt_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(ge, kCpu, ge_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(logical_and, kCpu, logical_and_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(logical_or, kCpu, logical_or_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(logical_xor, kCpu, logical_xor_kernel, DTypeSet::all());

}  // namespace
}  // namespace hearth::cpu
