// add, sub, mul, div, maximum, minimum on the CPU. Arithmetic in float for the
// half types.
#include "hearth/backends/cpu/elementwise_util.h"
#include "hearth/backends/cpu/strided_loop.h"
#include "hearth/dispatch/registry.h"
#include "hearth/dispatch/schemas/binary.h"

namespace hearth::cpu {
namespace {

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

void add_kernel(OpCall& call) {
  const Scalar alpha = call.attrs<AlphaAttrs>().alpha;
  run_binary(call, [&](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (std::is_same_v<C, bool>) {
      return [](bool a, bool b) { return a || b; };
    } else {
      const C al = alpha.to<C>();
      return [al](C a, C b) { return static_cast<C>(a + al * b); };
    }
  });
}

void sub_kernel(OpCall& call) {
  const Scalar alpha = call.attrs<AlphaAttrs>().alpha;
  run_binary(call, [&](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (std::is_same_v<C, bool>) {
      return [](bool a, bool b) { return a != b; };
    } else {
      const C al = alpha.to<C>();
      return [al](C a, C b) { return static_cast<C>(a - al * b); };
    }
  });
}

void mul_kernel(OpCall& call) {
  run_binary(call, [](auto tag) {
    using C = typename decltype(tag)::type;
    if constexpr (std::is_same_v<C, bool>)
      return [](bool a, bool b) { return a && b; };
    else
      return [](C a, C b) { return static_cast<C>(a * b); };
  });
}

void div_kernel(OpCall& call) {
  run_binary(call, [](auto tag) {
    using C = typename decltype(tag)::type;
    return [](C a, C b) { return static_cast<C>(a / b); };
  });
}

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

HEARTH_REGISTER_KERNEL(add, kCpu, add_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(sub, kCpu, sub_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(mul, kCpu, mul_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(div, kCpu, div_kernel, DTypeSet::floating());
HEARTH_REGISTER_KERNEL(maximum, kCpu, maximum_kernel, DTypeSet::all());
HEARTH_REGISTER_KERNEL(minimum, kCpu, minimum_kernel, DTypeSet::all());

}  // namespace
}  // namespace hearth::cpu
